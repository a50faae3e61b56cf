import { fromCallback } from 'xstate';
import type { ModelAnswer } from '../actors/model.js';
import type { ToolRequest, ToolResult } from '../actors/tool.js';
import { Header, type Headers, type Reply, type RequestOptions, type Subscription, type Transport } from '../actors/transport.js';
import type { RunToolUpdate } from './serveActors.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import type { ReactEvent, TransportActorInput, TransportCommand } from '../machines/reactTypes.js';
import type { DecisionContract } from '../machines/protocol.js';
import type { Clock } from './clock.js';
import { redactReply, type ReplyRedactor } from './redactReply.js';
import { limitToolResult } from './dataLimits.js';

/** Where the core's requests go. */
export interface ActorSubjects {
  readonly model: string;
  /**
   * Where a verification goes when the agent verifies with a model of its own
   * (`verification.model`); otherwise it goes to `model`.
   */
  readonly verifier?: string;
  tool(name: string): string;
  /** Where a run adds its turn to its conversation's memory, when it has one. */
  readonly memory?: string;
  /**
   * The run's live subject, where its tools say where their work lives (`RunToolUpdate.attached`):
   * heard while a call is in flight, and logged as `tool.attached`. Without it nothing is heard.
   */
  live?(traceId: string): string;
}

/** What the transport actor of one run works with (handed over through the machine's `effects`). */
export interface TransportEffects {
  readonly transport: Transport;
  readonly subjects: ActorSubjects;
  readonly clock: Clock;
  /**
   * `undefined` when the request about to be made is already in the log; otherwise resolves when
   * it is (rejects if the log failed). The recorder's `pending`.
   */
  readonly pending: () => Promise<void> | undefined;
  /**
   * True when the host stopped the run without an ending (`RunHandle.stop`: the worker shuts down
   * or lost the run to another): its calls in flight are then left to finish, for the next owner.
   */
  readonly stoppedFromOutside?: () => boolean;
  /** Longest wait for a model reply, all attempts together. Default 5 minutes. */
  readonly modelTimeoutMs?: number;
  /** Longest wait for a tool reply, all attempts together. Default 2 minutes. */
  readonly toolTimeoutMs?: number;
  /**
   * A tool's own longest wait, instead of `toolTimeoutMs`, when it has one: a subagent's call
   * waits for its whole run (`subagentCallTimeoutMs`).
   */
  readonly toolTimeoutOf?: (tool: string) => number | undefined;
  /** Longest wait for the memory actor to save a turn, all attempts together. Default 30 s. */
  readonly memoryTimeoutMs?: number;
  /**
   * Longest wait for one attempt. A request that fails at the transport (no worker answers, the
   * worker died mid-call, the call is in progress elsewhere) is sent again, with the same
   * idempotency key, until the total above runs out. Default: the total (one attempt), right for
   * actors in this process; distributed core workers set it, since there a worker may die mid-call.
   */
  readonly attemptTimeoutMs?: number;
  /**
   * Applied to every actor reply before the statechart sees it (so the log and the live envelope
   * hold the same data). Default: cut out every secret this process knows (`redactReply`).
   */
  readonly redact?: ReplyRedactor;
  /**
   * What the run's answers may be, put on each model request so the model actor can hold the
   * model to it (see `ModelLlmConfig.decisionFormat`). Absent when answers may be text.
   */
  readonly decision?: DecisionContract;
}

/**
 * Failures of the delivery, not of the actor: nobody answered (yet), the answer did not come, or
 * another worker holds the call. An actor's own errors (a model's 5xx after its own retries) are
 * its business and are not re-sent here.
 */
const DELIVERY_FAILURES: ReadonlySet<string> = new Set([
  ErrorCode.TRANSPORT_NO_RESPONDER,
  ErrorCode.TRANSPORT_TIMEOUT,
  ErrorCode.TRANSPORT_CLOSED,
  ErrorCode.TOOL_CALL_IN_PROGRESS,
  ErrorCode.TOOL_RESULT_STORE_FAILED,
]);

/** A delivery failure the transport says may succeed if tried again. */
function worthRetrying(error: ErrorInfo): boolean {
  return error.retryable === true && DELIVERY_FAILURES.has(error.code);
}

/**
 * The long-lived actor through which the REACT machine reaches its model and tools: one actor per
 * run rather than one promise actor per call (that halves the per-iteration cost), and one actor
 * logic for every run (its run's {@link TransportEffects} come in its input), so the machine is
 * provided once, not per run. A request goes out only once it is in the log, so every effect is
 * logged first.
 */
export const transportActorLogic = fromCallback<TransportCommand, TransportActorInput>(({ sendBack, receive, input }) => {
  const effects = input.effects?.() as TransportEffects | undefined;
  if (!effects) throw new Error("the transport actor needs its run's effects in its input");
  const session = new TransportSession(effects, sendBack);
  receive((command) => session.receive(command));
  return () => session.end();
});

/**
 * One run's side of the transport actor: a class rather than closures, so a run (most of them wait
 * on a reply most of the time) holds one small object, and each request allocates only its reply.
 */
class TransportSession {
  private readonly effects: TransportEffects;
  private readonly sendBack: (event: ReactEvent) => void;
  private readonly redact: ReplyRedactor;
  private readonly attemptTimeoutMs: number;
  /** Aborts the calls in flight when the run ends; made with the first request. */
  private stopped: AbortController | undefined = undefined;
  private ended = false;
  private inFlight = 0;
  /** The live subject heard while a tool call is in flight (one call at a time). */
  private attachment: Subscription | undefined = undefined;
  /** Where the call in flight said its work lives: a retry (its tool worker died) goes back to it. */
  private heard: ToolRequest['attached'] = undefined;

  constructor(effects: TransportEffects, sendBack: (event: ReactEvent) => void) {
    this.effects = effects;
    this.sendBack = sendBack;
    this.redact = effects.redact ?? redactReply;
    this.attemptTimeoutMs = effects.attemptTimeoutMs ?? Number.POSITIVE_INFINITY;
  }

  receive(command: TransportCommand): void {
    const logged = this.effects.pending();
    if (logged === undefined) this.perform(command);
    // A failed log means the host is stopping the run: make no request.
    else logged.then(() => this.perform(command), () => undefined);
  }

  end(): void {
    this.ended = true;
    this.attachment?.unsubscribe();
    // The run ended (aborted, timed out): its calls in flight are cancelled, so a tool worker stops
    // the tool. A run stopped from outside (its core worker shuts down, or another worker took it
    // over) is continued elsewhere with the same idempotency keys: its calls are left to finish
    // and be answered from storage; only their replies here are dropped. Only an in-flight request
    // has anyone to tell; aborting costs an event dispatch per run.
    if (this.inFlight > 0 && this.effects.stoppedFromOutside?.() !== true) this.stopped?.abort('the run ended');
  }

  private reply(event: ReactEvent): void {
    this.inFlight -= 1;
    this.attachment?.unsubscribe();
    this.attachment = undefined;
    this.heard = undefined;
    if (!this.ended) this.sendBack(event);
  }

  private perform(command: TransportCommand): void {
    if (this.ended) return;
    this.inFlight += 1;
    const { subjects, clock } = this.effects;
    const started = clock.now();
    if (command.type === 'model.request') {
      const { decision } = this.effects;
      // A verification is answered in its own shape: the run's decision contract does not apply to it.
      const verifying = command.request.purpose === 'verification';
      const request = decision === undefined || verifying ? command.request : { ...command.request, decision };
      const subject = verifying ? (subjects.verifier ?? subjects.model) : subjects.model;
      this.attempt(command, subject, request, undefined, started + (this.effects.modelTimeoutMs ?? 300_000), 100, started);
      return;
    }
    if (command.type === 'memory.request') {
      const { memory } = subjects;
      if (memory === undefined) {
        const error = errorInfo(ErrorCode.MEMORY_FAILED, 'the run saves a conversation but no memory actor is configured');
        return this.reply({ type: 'memory.failure', error, durationMs: 0 });
      }
      this.attempt(command, memory, command.request, undefined, started + (this.effects.memoryTimeoutMs ?? 30_000), 100, started);
      return;
    }
    const { request } = command;
    const totalMs = this.effects.toolTimeoutOf?.(request.tool) ?? this.effects.toolTimeoutMs ?? 120_000;
    const headers: Headers = { [Header.IdempotencyKey]: request.idempotencyKey, [Header.TraceId]: request.traceId };
    this.listenForAttachment(request);
    this.attempt(command, subjects.tool(request.tool), request, headers, started + totalMs, 100, started);
  }

  /** Hears where the call's work lives while it is in flight, and hands it to the machine to log. */
  private listenForAttachment(request: ToolRequest): void {
    const subject = this.effects.subjects.live?.(request.traceId);
    if (subject === undefined) return;
    const { idempotencyKey } = request;
    this.attachment = this.effects.transport.subscribe(subject, ({ data }) => {
      const update = data as Partial<RunToolUpdate> | undefined;
      if (this.ended || update?.toolCallId !== idempotencyKey || !isHandle(update.attached)) return;
      this.heard = update.attached;
      this.sendBack({ type: 'tool.attached', idempotencyKey, handle: update.attached });
    });
  }

  /**
   * One attempt of `command`'s request, sent again while it fails at the transport and time is
   * left: the hot path is the one `.then` of a successful reply; retries only cost when something
   * went wrong.
   */
  private attempt(command: TransportCommand, subject: string, data: unknown, headers: Headers | undefined, deadline: number, delayMs: number, started: number): void {
    const { clock, transport } = this.effects;
    const timeoutMs = Math.min(this.attemptTimeoutMs, Math.max(1, deadline - clock.now()));
    const signal = (this.stopped ??= new AbortController()).signal;
    const options: RequestOptions = headers === undefined ? { timeoutMs, signal } : { timeoutMs, signal, headers };
    void transport.request<unknown, unknown>(subject, data, options).then((answer) => {
      if (answer.ok || this.ended || !worthRetrying(answer.error) || clock.now() + delayMs >= deadline) return this.answered(command, started, answer);
      setTimeout(() => {
        if (this.ended) this.answered(command, started, answer);
        else this.attempt(command, subject, this.resent(command, data), headers, deadline, Math.min(delayMs * 2, 2000), started);
      }, delayMs);
    });
  }

  /**
   * What a retry sends: a tool call whose work said where it lives (its tool worker died after
   * `attach`) carries that handle, so the worker that takes it over re-attaches, not starts again.
   */
  private resent(command: TransportCommand, data: unknown): unknown {
    if (command.type !== 'tool.request' || this.heard === undefined) return data;
    return { ...command.request, attached: this.heard };
  }

  /** The machine's event for the reply to `command` (cut of secrets first). */
  private answered(command: TransportCommand, started: number, raw: Reply<unknown>): void {
    const durationMs = this.effects.clock.now() - started;
    if (command.type === 'model.request') {
      const answer = this.redact(raw as Reply<ModelAnswer>);
      if (!answer.ok) return this.reply({ type: 'model.failure', error: answer.error, durationMs });
      const { text, attempts, usage, answeredBy, fallbacks } = answer.data;
      if (fallbacks !== undefined) return this.reply({ type: 'model.answer', text, attempts, durationMs, ...(usage !== undefined && { usage }), answeredBy, fallbacks });
      // A verifier model says which model it is (see `asVerifier`).
      if (answeredBy !== undefined) return this.reply({ type: 'model.answer', text, attempts, durationMs, ...(usage !== undefined && { usage }), answeredBy });
      return this.reply(usage === undefined ? { type: 'model.answer', text, attempts, durationMs } : { type: 'model.answer', text, attempts, durationMs, usage });
    }
    if (command.type === 'memory.request') {
      const answer = this.redact(raw as Reply<boolean>);
      return this.reply(answer.ok ? { type: 'memory.saved', durationMs } : { type: 'memory.failure', error: answer.error, durationMs });
    }
    const answer = this.redact(raw as Reply<ToolResult>);
    this.reply({ type: 'tool.result', result: answer.ok ? limitToolResult(answer.data, command.request.tool) : { ok: false, error: answer.error }, durationMs });
  }
}

/** A handle as the log takes it: a few short strings (a tool's word, checked before it is logged). */
function isHandle(value: unknown): value is Readonly<Record<string, string>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length > 0 && entries.length <= 8 && entries.every(([, v]) => typeof v === 'string' && v.length <= 1024);
}
