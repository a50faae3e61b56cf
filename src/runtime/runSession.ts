import { createActor, type Actor } from 'xstate';
import type { RunBudget } from '../machines/contextBudget.js';
import type { DecisionContract } from '../machines/protocol.js';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import { waitOfEvent, type RunWait, type WaitAnswer } from '../events/pendingWait.js';
import { reactMachine } from '../machines/reactMachine.js';
import { ReactStateGroup } from '../machines/reactState.js';
import type { FactEmitted, ReactEvent, ReactMachineInput, ResumePoint } from '../machines/reactTypes.js';
import { subagentCallTimeoutMs } from '../machines/subagents.js';
import type { Transport } from '../actors/transport.js';
import { alsoTo, watchRun } from '../telemetry/watchRun.js';
import type { RunTelemetry } from '../telemetry/telemetry.js';
import { answerRulesFor, decisionContractFor } from './answerRules.js';
import { systemClock, type Clock } from './clock.js';
import { createRecorder, type Recorder } from './recorder.js';
import { limitToolResult } from './dataLimits.js';
import { redactReply } from './redactReply.js';
import { redactSecrets } from '../secrets/secrets.js';
import { RunWaitingError } from './runWaitingError.js';
import { transportActorLogic, type ActorSubjects, type TransportEffects } from './transportActor.js';
import type { RunEnvironment, RunHandle, RunResult } from './runTypes.js';

export type { RunEnvironment, RunHandle, RunMemory, RunResult } from './runTypes.js';

/** The REACT machine with the real transport actor: provided once, shared by every run. */
export const runtimeMachine = reactMachine.provide({ actors: { transport: transportActorLogic } });

/** What a run starts from: its start, and for a resumed run where it resumes and the answer it takes. */
export type PreparedRun = Pick<ReactMachineInput, 'run'> & { resume?: ResumePoint; answer?: { answer: WaitAnswer; wait: RunWait }; budget?: RunBudget };

type RuntimeActor = Actor<typeof runtimeMachine>;
type Ending = 'ended' | 'waiting' | 'failed';

const ignore = (): undefined => undefined;

/** Starts the run `prepare` describes once it resolves (loading memory first, for a new run). */
export function launch(options: RunEnvironment, traceId: string, prepare: () => Promise<PreparedRun>): RunHandle {
  return new RunSession(options, traceId, prepare);
}

/**
 * One run under way in this process: its statechart's actor, its recorder and the effects its
 * transport actor works with. A class with its state in fields rather than a tree of closures: a
 * process holds one of these per run, and most runs spend most of their time waiting.
 */
class RunSession implements RunHandle {
  readonly traceId: string;
  readonly result: Promise<RunResult>;
  private readonly clock: Clock;
  /** The caller's abort signal, if any (the options themselves are not kept past the start). */
  private readonly signal: AbortSignal | undefined;
  private running: RuntimeActor | undefined = undefined;
  private abortReason: { reason?: string } | undefined = undefined;
  private stopped = false;
  private watched: RunTelemetry | undefined = undefined;
  /** The answer the resumed run takes in its wait, until it is sent. */
  private pendingAnswer: PreparedRun['answer'] = undefined;
  private logFailure: RedflowError | undefined = undefined;
  private recorder: Recorder | undefined = undefined;
  /** Settles `result`: a run's one promise, which the run settles itself when it ends or stops. */
  private readonly settle: { resolve(result: RunResult): void; reject(error: unknown): void };
  private ending: Ending | undefined = undefined;
  private settled = false;
  private timer: unknown = undefined;
  private onSignal: (() => void) | undefined = undefined;

  constructor(options: RunEnvironment, traceId: string, prepare: () => Promise<PreparedRun>) {
    this.traceId = traceId;
    this.clock = options.clock ?? systemClock;
    this.signal = options.signal;
    let settle: RunSession['settle'] | undefined;
    this.result = new Promise<RunResult>((resolve, reject) => (settle = { resolve, reject }));
    this.settle = settle as RunSession['settle'];
    // Nobody has to wait for the result: a run stopped and forgotten must not reject unheard.
    this.result.catch(ignore);
    prepare().then(
      (prepared) => this.start(options, prepared),
      (error: unknown) => this.fail(error),
    );
  }

  abort(reason?: string): void {
    // Written by whoever aborts: cut of secrets before it is recorded, like an answer.
    const given = reason !== undefined ? { reason: redactSecrets(reason) } : {};
    if (this.running) this.running.send({ type: 'abort', ...given });
    else this.abortReason = given;
  }

  stop(): void {
    this.stopped = true;
    this.running?.stop();
  }

  actor(): RuntimeActor | undefined {
    return this.running;
  }

  private start(options: RunEnvironment, { run, resume, answer, budget }: PreparedRun): void {
    const { traceId, clock } = this;
    try {
      // With telemetry on, the stretch's span follows its events and its requests carry the trace.
      this.watched = watchRun(traceId, run, resume !== undefined, options.sessionId);
      const onEvent = alsoTo(this.watched, options.onEvent);
      this.pendingAnswer = answer;
      const recorder = createRecorder({
        traceId,
        store: options.store,
        clock,
        afterSeq: resume?.afterSeq ?? 0,
        ...(options.tracePrefix !== undefined && { trace: { transport: options.transport, prefix: options.tracePrefix } }),
        ...(onEvent !== undefined && { onEvent }),
        onFailure: (error) => this.logFailed(error),
      });
      this.recorder = recorder;
      const effects = new RunEffects(options, this, recorder, this.watched?.carry(options.transport) ?? options.transport);
      // Set member by member: the actor keeps its input for the run's whole life.
      const input: { -readonly [K in keyof ReactMachineInput]: ReactMachineInput[K] } = {
        traceId,
        agent: options.agent,
        tools: options.tools,
        rules: answerRulesFor(options.agent, options.tools, options.limits, options.textActions),
        run,
        effects: effects.thunk,
      };
      if (options.timeoutMs !== undefined) input.timeoutMs = options.timeoutMs;
      if (resume !== undefined) input.resume = resume;
      if (options.memory) input.memory = { conversationId: options.memory.conversationId, maxTurns: options.memory.maxTurns ?? 20 };
      Object.assign(input, options.contextBudget && { contextBudget: options.contextBudget }, budget && { budget });
      if (this.stopped) throw stoppedError(traceId);
      const running = createActor(runtimeMachine, options.inspect === undefined ? { input } : { input, inspect: options.inspect });
      this.running = running;
      running.on('fact', (emitted: FactEmitted) => recorder.record(emitted.fact));
      running.subscribe(new RunObserver(this));
      if (options.signal !== undefined) {
        const { signal } = options;
        const onSignal = () => running.send({ type: 'abort', reason: redactSecrets(String(signal.reason ?? 'signal aborted')) });
        this.onSignal = onSignal;
        signal.addEventListener('abort', onSignal, { once: true });
      }
      running.start();
      if (this.abortReason) running.send({ type: 'abort', ...this.abortReason });
      if (options.signal?.aborted) this.onSignal?.();
      const waitsWithAnswer = this.pendingAnswer;
      if (waitsWithAnswer !== undefined && running.getSnapshot().matches(ReactStateGroup.Waiting)) {
        this.pendingAnswer = undefined;
        running.send(answerEvent(waitsWithAnswer.answer, waitsWithAnswer.wait, clock));
      }
      if (options.timeoutMs !== undefined && this.ending === undefined) this.timer = clock.setTimeout(() => running.send({ type: 'timeout' }), options.timeoutMs);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Each snapshot: the run is done, or waits for an answer with none at hand (the host lets it go). */
  observe(snapshot: ReturnType<RuntimeActor['getSnapshot']>): void {
    if (snapshot.status === 'done') this.end('ended');
    else if (this.pendingAnswer === undefined && snapshot.matches(ReactStateGroup.Waiting)) this.end('waiting');
  }

  /** The run ended or waits: once everything it recorded is in the log, its result is settled. */
  end(how: Ending): void {
    if (this.ending !== undefined) return;
    this.ending = how;
    (this.recorder as Recorder).settled().then(() => this.complete(how), ignore);
  }

  /** The statechart's actor failed: the run's result is that error, unless the run had ended first. */
  actorFailed(error: unknown): void {
    if (this.ending !== undefined) return;
    this.ending = 'failed';
    this.fail(error);
  }

  private logFailed(error: ErrorInfo): void {
    this.logFailure = new RedflowError(error);
    this.running?.stop();
  }

  private cleanUp(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer as ReturnType<Clock['setTimeout']>);
    if (this.onSignal !== undefined) this.signal?.removeEventListener('abort', this.onSignal);
  }

  /** Settles the run's result with `error` (a run's result settles once). */
  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.cleanUp();
    // The stretch's span ends with it: at the run's ending, a wait, a stop or a failed log.
    this.watched?.end(error);
    this.settle.reject(error);
  }

  /** Settles the run's result once it ended (or why it has none: its log failed, it waits, it was stopped). */
  private complete(how: Ending): void {
    const { traceId } = this;
    const running = this.running as RuntimeActor;
    const recorder = this.recorder as Recorder;
    if (this.logFailure) return this.fail(this.logFailure);
    if (how === 'waiting') {
      // Parked: its wait is in the log, so the run needs no process until the answer comes.
      this.stopped = true;
      running.stop();
      const envelope = running.getSnapshot().context.envelope;
      const call = envelope.tools.history[envelope.tools.history.length - 1];
      const last = recorder.lastEvent;
      const wait = last === undefined ? undefined : waitOfEvent(last, { input: (call?.input ?? {}) as Record<string, unknown> });
      return this.fail(wait === undefined ? stoppedError(traceId) : new RunWaitingError(traceId, wait, envelope, recorder.lastSeq));
    }
    const envelope = running.getSnapshot().context.envelope;
    const outcome = envelope.observability.outcome;
    if (!outcome) return this.fail(stoppedError(traceId));
    if (this.settled) return;
    this.settled = true;
    this.cleanUp();
    this.watched?.end();
    this.settle.resolve({ traceId, outcome, envelope, lastSeq: recorder.lastSeq });
  }

  /** True once the host stopped the run without an ending (see `TransportEffects.stoppedFromOutside`). */
  get stoppedFromOutside(): boolean {
    return this.stopped;
  }
}

/** Watches a run's actor for its session (a class, so a run holds no closures for it). */
class RunObserver {
  private readonly session: RunSession;

  constructor(session: RunSession) {
    this.session = session;
  }

  next(snapshot: ReturnType<RuntimeActor['getSnapshot']>): void {
    this.session.observe(snapshot);
  }

  error(error: unknown): void {
    this.session.actorFailed(error);
  }

  complete(): void {
    this.session.end('ended');
  }
}

/** What the run's transport actor works with: one object per run, its methods shared. */
class RunEffects implements TransportEffects {
  readonly transport: Transport;
  readonly subjects: ActorSubjects;
  readonly clock: Clock;
  readonly modelTimeoutMs: number | undefined;
  readonly toolTimeoutMs: number | undefined;
  readonly attemptTimeoutMs: number | undefined;
  /** What the machine's input carries: a thunk, so snapshots and the inspector never serialise the effects. */
  readonly thunk: () => RunEffects;
  private readonly session: RunSession;
  private readonly recorder: Recorder;

  constructor(options: RunEnvironment, session: RunSession, recorder: Recorder, transport: Transport) {
    this.session = session;
    this.recorder = recorder;
    this.transport = transport;
    this.subjects = options.memory ? Object.assign({}, options.subjects, { memory: options.memory.appendSubject }) : options.subjects;
    this.clock = options.clock ?? systemClock;
    this.modelTimeoutMs = options.modelTimeoutMs;
    this.toolTimeoutMs = options.toolTimeoutMs;
    this.attemptTimeoutMs = options.attemptTimeoutMs;
    // Answers that may come as text (the step service's prose tools) are held to no schema.
    if (options.textActions === undefined) this.decision = decisionContractFor(options.agent, options.tools);
    // A subagent's call lasts as long as its run may.
    if (options.tools.some((spec) => spec.subagent !== undefined)) {
      const { tools } = options;
      this.toolTimeoutOf = (tool: string) => subagentCallTimeoutMs(tools, tool);
    }
    this.thunk = () => this;
  }

  readonly toolTimeoutOf?: (tool: string) => number | undefined;
  readonly decision?: DecisionContract;

  pending(): Promise<void> | undefined {
    return this.recorder.pending();
  }

  stoppedFromOutside(): boolean {
    return this.session.stoppedFromOutside;
  }
}

/**
 * The machine event that carries an answer into the wait it answers. Whatever a person or a client
 * wrote is cut of secrets here, like an actor's reply: the log and the live run then hold the same
 * text, and a key pasted into an answer by mistake is never recorded.
 */
function answerEvent(answer: WaitAnswer, wait: RunWait, clock: Clock): ReactEvent {
  const reason = answer.kind === 'approval' || answer.kind === 'abort' ? answer.reason : undefined;
  const redactedReason = reason !== undefined && { reason: redactSecrets(reason) };
  switch (answer.kind) {
    case 'approval':
      return { type: answer.approved ? 'tool.approve' : 'tool.deny', ...redactedReason };
    case 'expire':
      return { type: 'wait.expire' };
    case 'human':
      return { type: 'human.answer', text: redactSecrets(answer.text) };
    case 'abort':
      return { type: 'abort', ...redactedReason };
    case 'client': {
      // A client's result is a tool's reply like any other: limited and cut of secrets before the
      // statechart sees it, so the log and the live run hold the same data.
      const reply = redactReply(answer.result.ok ? { ok: true, data: answer.result.output } : { ok: false, error: answer.result.error });
      const result = limitToolResult(reply.ok ? { ok: true, output: reply.data } : reply, wait.tool);
      const since = Date.parse(wait.since);
      return { type: 'tool.result', result, durationMs: Number.isFinite(since) ? Math.max(0, clock.now() - since) : 0 };
    }
  }
}

function stoppedError(traceId: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.RUN_STOPPED, `run ${traceId} stopped without an outcome`, {
      hint: 'it was stopped from outside; resume it from its log',
    }),
  );
}
