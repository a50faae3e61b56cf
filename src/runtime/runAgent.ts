import { createActor, type Actor, type InspectionEvent } from 'xstate';
import type { AgentCoreReactConfig, AgentEnvelope, FlowRef, RunOutcome, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { EventStore } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { logStatus } from '../events/resumePoint.js';
import { reactMachine } from '../machines/reactMachine.js';
import type { ReactMachineInput, ResumePoint } from '../machines/reactTypes.js';
import type { Transport } from '../actors/transport.js';
import type { MemoryRecord } from '../actors/memory.js';
import { buildAnswerRules } from './answerRules.js';
import { systemClock, type Clock } from './clock.js';
import { randomIds, type IdSource } from './ids.js';
import { createRecorder } from './recorder.js';
import { checkMemoryRecord, checkRunInput } from './dataLimits.js';
import { transportActorLogic, type ActorSubjects, type TransportEffects } from './transportActor.js';
import type { AnswerLimits } from '../validation/validateModelAnswer.js';

/** Where a run's memory lives: a memory actor reached on the transport. */
export interface RunMemory {
  /** Subject on which the memory actor answers `{ conversationId }` with the record (or null). */
  readonly loadSubject: string;
  /** Subject on which the memory actor adds `{ conversationId, turn, maxTurns }` to the conversation. */
  readonly appendSubject: string;
  readonly conversationId: string;
  /** Turns kept in memory (default 20). */
  readonly maxTurns?: number;
}

/** What every run needs, new or resumed. */
export interface RunEnvironment {
  readonly agent: AgentCoreReactConfig;
  /** The allowed tools, as the model is told about them. */
  readonly tools: readonly ToolSpec[];
  readonly transport: Transport;
  readonly subjects: ActorSubjects;
  readonly store: EventStore;
  readonly clock?: Clock;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly memory?: RunMemory;
  /** Publish every appended event on `<prefix>.trace.<traceId>.<type>` of the transport. */
  readonly tracePrefix?: string;
  readonly limits?: AnswerLimits;
  /** Called with each event once it is in the log. */
  readonly onEvent?: (event: AgentEvent) => void;
  /** Sees every inspection event of the run's statechart (the Stately inspector attaches here). */
  readonly inspect?: (event: InspectionEvent) => void;
  readonly modelTimeoutMs?: number;
  readonly toolTimeoutMs?: number;
  /** One attempt's limit; a request failing at the transport is re-sent until the totals above. */
  readonly attemptTimeoutMs?: number;
}

/** Options of {@link startRun}. */
export interface StartRunOptions extends RunEnvironment {
  readonly input: unknown;
  readonly traceId?: string;
  readonly ids?: IdSource;
  readonly flow?: FlowRef;
}

/** How a run ended. */
export interface RunResult {
  readonly traceId: string;
  readonly outcome: RunOutcome;
  /** The final envelope: the fold of the run's log. */
  readonly envelope: AgentEnvelope;
  /** The seq of the run's last event. */
  readonly lastSeq: number;
}

/** A run under way. */
export interface RunHandle {
  readonly traceId: string;
  /** Resolves when the run has ended and its last event is in the log. */
  readonly result: Promise<RunResult>;
  /** Ends the run as `aborted` from whatever state it is in. */
  abort(reason?: string): void;
  /**
   * Stops working on the run without recording anything, so another worker can resume it from
   * its log (a worker shutting down, or one that lost the run's lease). `result` then rejects
   * with `RUN_STOPPED`.
   */
  stop(): void;
  /** The statechart's actor, once started (for inspection). */
  readonly actor: () => Actor<typeof runtimeMachine> | undefined;
}

/**
 * Starts a run: loads the conversation's memory, runs the REACT statechart with its actors
 * reached over `transport`, and appends every transition to `store`; the statechart's last step
 * adds the run's turn to the conversation.
 *
 * @throws RedflowError `RUN_INPUT_TOO_DEEP` / `RUN_INPUT_TOO_LARGE` for an input past the limits
 *   a model's answer has (nothing is recorded).
 * @example
 * ```ts
 * const run = startRun({ agent, tools, transport, subjects, store, input: 'Where is order A-1?' });
 * const { outcome, envelope } = await run.result;
 * ```
 */
export function startRun(options: StartRunOptions): RunHandle {
  // Hosts check it before they create anything (a log, a run record); checked here too, for
  // callers of the library, since deeper data would overflow the prompt builder's stack.
  checkRunInput(options.input);
  const traceId = options.traceId ?? (options.ids ?? randomIds).traceId();
  const clock = options.clock ?? systemClock;
  return launch(options, traceId, async () => {
    const memory = options.memory ? await loadMemory(options, options.memory) : undefined;
    return {
      run: {
        input: options.input,
        startedAt: new Date(clock.now()).toISOString(),
        ...(memory !== undefined && { memory }),
        ...(options.memory && { conversationId: options.memory.conversationId }),
        ...(options.flow !== undefined && { flow: options.flow }),
      },
    };
  });
}

/** Options of {@link resumeRun}: the environment, and the run's log as read back. */
export interface ResumeRunOptions extends RunEnvironment {
  readonly events: readonly AgentEvent[];
}

/**
 * Continues an interrupted run from its log (invariant 4 of docs/architecture.md): the envelope is
 * the fold of the log, an unanswered model request is asked again, and a tool request that was
 * logged but not completed is re-sent with the same idempotency key. A finished run resolves at
 * once with its outcome.
 *
 * @example
 * ```ts
 * const { events } = await readJsonlLog('run.jsonl');
 * const { outcome } = await resumeRun({ ...environment, events }).result;
 * ```
 */
export function resumeRun(options: ResumeRunOptions): RunHandle {
  const status = logStatus(options.events);
  const traceId = status.started === undefined ? '' : (options.events[0] as AgentEvent).traceId;
  if (status.kind === 'finished') {
    const last = options.events[options.events.length - 1] as AgentEvent;
    return {
      traceId,
      result: Promise.resolve({ traceId, outcome: status.outcome, envelope: status.envelope, lastSeq: last.seq }),
      abort: () => undefined,
      stop: () => undefined,
      actor: () => undefined,
    };
  }
  const { started, point } = status;
  return launch(options, traceId, async () => ({
    run: {
      input: started.input,
      startedAt: started.startedAt,
      ...(started.memory !== undefined && { memory: started.memory }),
      ...(started.conversationId !== undefined && { conversationId: started.conversationId }),
      ...(started.flow !== undefined && { flow: started.flow }),
    },
    resume: point,
  }));
}

/** The REACT machine with the real transport actor: provided once, shared by every run. */
const runtimeMachine = reactMachine.provide({ actors: { transport: transportActorLogic } });

function launch(
  options: RunEnvironment,
  traceId: string,
  prepare: () => Promise<Pick<ReactMachineInput, 'run'> & { resume?: ResumePoint }>,
): RunHandle {
  const clock = options.clock ?? systemClock;
  let actor: Actor<typeof runtimeMachine> | undefined;
  let abortReason: { reason?: string } | undefined;
  let stopped = false;

  const result = (async (): Promise<RunResult> => {
    const { run, resume } = await prepare();
    let logFailure: RedflowError | undefined;
    const recorder = createRecorder({
      traceId,
      store: options.store,
      clock,
      afterSeq: resume?.afterSeq ?? 0,
      ...(options.tracePrefix !== undefined && { trace: { transport: options.transport, prefix: options.tracePrefix } }),
      ...(options.onEvent !== undefined && { onEvent: options.onEvent }),
      onFailure: (error) => {
        logFailure = new RedflowError(error);
        actor?.stop();
      },
    });
    const effects: TransportEffects = {
      transport: options.transport,
      subjects: options.memory ? { ...options.subjects, memory: options.memory.appendSubject } : options.subjects,
      clock,
      pending: recorder.pending,
      stoppedFromOutside: () => stopped,
      ...(options.modelTimeoutMs !== undefined && { modelTimeoutMs: options.modelTimeoutMs }),
      ...(options.toolTimeoutMs !== undefined && { toolTimeoutMs: options.toolTimeoutMs }),
      ...(options.attemptTimeoutMs !== undefined && { attemptTimeoutMs: options.attemptTimeoutMs }),
    };
    const input: ReactMachineInput = {
      traceId,
      agent: options.agent,
      tools: options.tools,
      rules: buildAnswerRules(options.agent.allowedTools, options.tools, options.limits),
      run,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(resume !== undefined && { resume }),
      ...(options.memory && { memory: { conversationId: options.memory.conversationId, maxTurns: options.memory.maxTurns ?? 20 } }),
      effects: () => effects,
    };
    if (stopped) throw stoppedError(traceId);
    const running = createActor(runtimeMachine, options.inspect === undefined ? { input } : { input, inspect: options.inspect });
    actor = running;
    running.on('fact', ({ fact }) => recorder.record(fact));

    const ended = new Promise<void>((resolve, reject) => {
      running.subscribe({
        next: (snapshot) => {
          if (snapshot.status === 'done') resolve();
        },
        error: reject,
        complete: () => resolve(),
      });
    });
    const onAbort = () => running.send({ type: 'abort', reason: String(options.signal?.reason ?? 'signal aborted') });
    options.signal?.addEventListener('abort', onAbort, { once: true });
    running.start();
    if (abortReason) running.send({ type: 'abort', ...abortReason });
    if (options.signal?.aborted) onAbort();
    const timer = options.timeoutMs === undefined ? undefined : clock.setTimeout(() => running.send({ type: 'timeout' }), options.timeoutMs);
    try {
      await ended;
      await recorder.settled().catch(() => undefined);
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
    if (logFailure) throw logFailure;
    const envelope = running.getSnapshot().context.envelope;
    const outcome = envelope.observability.outcome;
    if (!outcome) throw stoppedError(traceId);
    return { traceId, outcome, envelope, lastSeq: recorder.lastSeq };
  })();

  return {
    traceId,
    result,
    abort(reason) {
      if (actor) actor.send({ type: 'abort', ...(reason !== undefined && { reason }) });
      else abortReason = reason !== undefined ? { reason } : {};
    },
    stop() {
      stopped = true;
      actor?.stop();
    },
    actor: () => actor,
  };
}

function stoppedError(traceId: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.RUN_STOPPED, `run ${traceId} stopped without an outcome`, {
      hint: 'it was stopped from outside; resume it from its log',
    }),
  );
}

async function loadMemory(env: RunEnvironment, memory: RunMemory): Promise<MemoryRecord | undefined> {
  const reply = await env.transport.request<{ conversationId: string }, MemoryRecord | null>(
    memory.loadSubject,
    { conversationId: memory.conversationId },
    { timeoutMs: 30_000 },
  );
  if (!reply.ok) throw new RedflowError(reply.error);
  checkMemoryRecord(reply.data, memory.conversationId);
  return reply.data ?? undefined;
}
