import type { Actor, InspectionEvent } from 'xstate';
import type { AgentCoreReactConfig, AgentEnvelope, RunOutcome, ToolSpec } from '../contracts/schema-types.js';
import type { EventStore } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import type { reactMachine } from '../machines/reactMachine.js';
import type { AnswerLimits } from '../validation/validateModelAnswer.js';
import type { TextActionRules } from '../validation/validateTextAnswer.js';
import type { Transport } from '../actors/transport.js';
import type { Clock } from './clock.js';
import type { ActorSubjects } from './transportActor.js';

// A run's contract: what it is given (its environment, its memory) and what it gives back (its
// handle, its result). Types only; the session that keeps it is runSession.ts.

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

/**
 * What every run needs, new or resumed.
 *
 * @example
 * ```ts
 * const actors = serveActors({ model: createScriptedModel([{ action: 'final', message: 'hi', confidence: 0.9 }]), tools: [] });
 * const environment: RunEnvironment = { ...actors, agent: { strategy: 'react', maxIterations: 3, allowedTools: [] }, store: createMemoryEventStore() };
 * ```
 */
export interface RunEnvironment {
  readonly agent: AgentCoreReactConfig;
  /** The model's name, for the agent's `budget`: its prices and its tokenizer (src/runtime/runBudgetFor.ts). */
  readonly modelName?: string;
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
  /** Longest wait for a tool's reply (a call Redflow makes; a client tool's wait is bounded by the agent's `waitTimeoutMs`). */
  readonly toolTimeoutMs?: number;
  /** One attempt's limit; a request failing at the transport is re-sent until the totals above. */
  readonly attemptTimeoutMs?: number;
  /** The model's context window: each request leaves out the oldest messages that do not fit. */
  readonly contextBudget?: ContextBudget;
  /** Also take answers in the text ReAct form (`Action: name(…)`), as the step service's sessions do. */
  readonly textActions?: TextActionRules;
  /** A step-service session the run belongs to: telemetry's `gen_ai.conversation.id` (not logged), to find a session's traces together. */
  readonly sessionId?: string;
}

/**
 * How a run ended.
 *
 * @example
 * ```ts
 * const { outcome, envelope, lastSeq }: RunResult = await startRun({ ...environment, input: 'hi' }).result;
 * console.log(outcome.status, outcome.answer, envelope.state.iteration, lastSeq);
 * ```
 */
export interface RunResult {
  readonly traceId: string;
  readonly outcome: RunOutcome;
  /** The final envelope: the fold of the run's log. */
  readonly envelope: AgentEnvelope;
  /** The seq of the run's last event. */
  readonly lastSeq: number;
}

/**
 * A run under way.
 *
 * @example
 * ```ts
 * const run: RunHandle = startRun({ ...environment, input: 'hi' });
 * setTimeout(() => run.abort('took too long'), 30_000);
 * const { outcome } = await run.result;
 * ```
 */
export interface RunHandle {
  readonly traceId: string;
  /**
   * Resolves when the run has ended and its last event is in the log. Rejects with
   * {@link RunWaitingError} (`RUN_WAITING`) when the run waits for an answer from outside (an
   * approval, a client tool's result): the wait is then in the log and no process holds the run;
   * the answer resumes it (`answerWaitingRun`).
   */
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
  readonly actor: () => Actor<typeof reactMachine> | undefined;
}
