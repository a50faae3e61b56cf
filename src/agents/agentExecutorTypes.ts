import type { AgentEnvelope, HumanQuestion, ParentCall, RunOutcome } from '../contracts/schema-types.js';
import type { ErrorInfo } from '../errors.js';
import type { EventStore, LogProblem } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { JsonlFsyncMode } from '../events/jsonlEventStore.js';
import type { GivenAnswer } from '../events/pendingWait.js';
import type { ChatMessage, ModelActor } from '../actors/model.js';
import type { Clock } from '../runtime/clock.js';
import type { IdSource } from '../runtime/ids.js';
import type { RunEnvironment, RunHandle } from '../runtime/runSession.js';
import type { ServedActors } from '../runtime/embeddedActors.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import type { ToolSpec } from '../contracts/schema-types.js';
import type { ActivityFeed } from './activityFeed.js';
import type { AgentActivityEvent } from './activity.js';
import type { TerminateReason } from './terminateReason.js';

// What an AgentExecutor is given and gives back, and the parts of a run it holds meanwhile. Types
// only: nothing here is loaded at run time.

/**
 * How an {@link AgentExecutor} runs every definition it is given.
 *
 * @example
 * ```ts
 * const executor = new AgentExecutor({ model: createScriptedModel([{ action: 'final', message: 'hi', confidence: 0.9 }]), runsDir: '.redflow/runs' } satisfies AgentExecutorOptions);
 * ```
 */
export interface AgentExecutorOptions {
  /** The model to use instead of the one each definition's `modelConfig` describes (a shared client, a scripted model in tests). */
  readonly model?: ModelActor;
  /** Where runs keep their JSONL logs, `<runsDir>/<traceId>.jsonl`. Default `.redflow/runs`, as `redflow run`. */
  readonly runsDir?: string;
  /** Environment for the model's settings and key. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where a scripted model's `answersFile` is found. Default the working directory. */
  readonly baseDir?: string;
  readonly clock?: Clock;
  readonly ids?: IdSource;
  /** How JSONL logs are synced (default `always`: each event is on disk before the run goes on). */
  readonly fsync?: JsonlFsyncMode;
}

/**
 * Options of one run.
 *
 * @example
 * ```ts
 * const options: ExecuteOptions = { inputs: { question: 'Where is order A-1001?' }, signal: AbortSignal.timeout(60_000) };
 * const result = await executor.execute(agent, options);
 * ```
 */
export interface ExecuteOptions {
  /** The values of the definition's inputs, by name: checked against `inputConfig`, put in for `${name}`. */
  readonly inputs?: Readonly<Record<string, unknown>>;
  /** Aborts the run: it ends `aborted`, and the call under way is cancelled. */
  readonly signal?: AbortSignal;
  /**
   * Sees the run's activity as it happens (see {@link AgentActivityEvent}). A callback that throws
   * loses that event, never the run.
   */
  readonly onActivity?: (event: AgentActivityEvent) => void;
  /** Sees each event once it is in the log. */
  readonly onEvent?: (event: AgentEvent) => void;
  /**
   * Answers the model's questions to a person (its `escalate` and `request_info` actions) in this
   * process: the answer is the model's next observation, and the run goes on. `undefined` leaves
   * the question unanswered: the run ends `escalate` with it at once (`HUMAN_ANSWER_MISSING`), its
   * terminate reason `escalated` or `info_requested`. Without `onQuestion`, a question parks the
   * run in its log like any wait (`RunWaitingError`, `wait.kind` `'human'`), for
   * {@link AgentExecutor.resume} with `{ kind: 'human', text }` or `redflow answer <log>`.
   */
  readonly onQuestion?: (question: HumanQuestion) => string | undefined | Promise<string | undefined>;
  readonly traceId?: string;
  /** The JSONL log to write (must not hold a run yet). Default `<runsDir>/<traceId>.jsonl`. */
  readonly logPath?: string;
  /** Keep the log in this store instead of a JSONL file (e.g. `createMemoryEventStore()`); the caller closes it. */
  readonly store?: EventStore;
  /** The API key for this run's model calls instead of the environment's (never logged). */
  readonly modelApiKey?: string;
  /**
   * The file the definition was loaded from, recorded in the log (`run.started`'s `flow.path`) so
   * `redflow resume <log>` can load it again. `redflow run <file.ts>` sets it.
   */
  readonly modulePath?: string;
  /** The answers file of `redflow run --script`, recorded in the log (`flow.script`) so a resume takes it again. */
  readonly scriptFile?: string;
  /** The call of another run that starts this one as its subagent, logged in `run.started` (the child's link to its parent). */
  readonly parent?: ParentCall;
}

/** Options of {@link AgentExecutor.resume}: the log to continue, by file or by store. */
export type ResumeAgentOptions = Pick<ExecuteOptions, 'signal' | 'onActivity' | 'onEvent' | 'onQuestion' | 'modelApiKey'> &
  ({ readonly logPath: string } | { readonly store: EventStore; readonly traceId: string }) & {
    /** A timeout for this stretch of the run instead of the one it started with. */
    readonly timeoutMs?: number;
    /**
     * The answer to the wait the run is parked in: a person's decision on a call
     * (`{ kind: 'approval', approved, reason? }`), the result of a client tool
     * (`{ kind: 'client', result: { ok: true, output } }`), or a person's answer to the model's
     * question (`{ kind: 'human', text }`), optionally naming the call or question
     * (`idempotencyKey`, `iteration`). Judged against the log first (the run host's `takeAnswer`): one that does
     * not fit is refused with its code before anything is recorded.
     */
    readonly answer?: GivenAnswer | { readonly kind: 'expire' };
  };

/**
 * How a definition's run ended.
 *
 * @example
 * ```ts
 * const result: AgentResult<{ answer: string }> = await executor.execute(agent, { inputs: { question: 'Where is order A-1001?' } });
 * if (result.success) console.log(result.output?.answer);
 * else console.error(result.terminateReason, result.error);
 * ```
 */
export interface AgentResult<TOutput = unknown> {
  /** True when the run reached its goal: a final answer (matching `outputConfig`, when there is one). */
  readonly success: boolean;
  /**
   * The final answer: checked against `outputConfig.schema` (the value a Standard Schema gives, of
   * its output type), or the answer's text without an `outputConfig`.
   */
  readonly output?: TOutput;
  /**
   * With an `outputConfig` and a final answer: true when its output is the one asked for, false
   * when it is not (`errorInfo` says why, `rawContent` holds it as given).
   */
  readonly validated?: boolean;
  /** The answer as the model gave it (a stop condition's: what the run had); `''` without one. */
  readonly rawContent: string;
  readonly terminateReason: TerminateReason;
  /** What went wrong, in words, when something did. */
  readonly error?: string;
  /** The same, as coded data: the run's error, or `AGENT_OUTPUT_INVALID` for an answer that does not match `outputConfig`. */
  readonly errorInfo?: ErrorInfo;
  /** Turns taken: model calls, each with at most one tool call. */
  readonly turnCount: number;
  /** The conversation: the messages the model was last sent, then its last answer. */
  readonly messages: readonly ChatMessage[];
  readonly traceId: string;
  /** The JSONL log (`redflow replay` shows it), when the run kept one. */
  readonly logPath?: string;
  /** The run's outcome and its final envelope (the fold of its log), as for a flow's run. */
  readonly outcome: RunOutcome;
  readonly envelope: AgentEnvelope;
  /** The seq of the run's last event. */
  readonly lastSeq: number;
}

/**
 * A definition's run under way. Iterate it (`for await (const activity of run)`) for its activity
 * from the start; `result` settles when it has ended and its log is closed.
 *
 * @example
 * ```ts
 * const run: AgentRun = await executor.start(agent, { inputs: { question: 'Where is order A-1001?' } });
 * for await (const activity of run) console.log(activity.type);
 * const result = await run.result;
 * ```
 */
export interface AgentRun<TOutput = unknown> extends AsyncIterable<AgentActivityEvent> {
  readonly traceId: string;
  readonly logPath: string | undefined;
  readonly result: Promise<AgentResult<TOutput>>;
  /** The statechart's run (what `startRun` returns), for hosts that need it. */
  readonly handle: RunHandle;
  /** A torn last record of the log that a resume cut off. */
  readonly repaired?: LogProblem;
  /** Ends the run as `aborted`. */
  abort(reason?: string): void;
}

/**
 * The part of a run's environment that is the same for each stretch of it (start, resumes).
 *
 * @example
 * ```ts
 * startRun({ ...environment, agent, tools, input, traceId });
 * ```
 */
export type Environment = Pick<RunEnvironment, 'transport' | 'subjects' | 'store' | 'signal' | 'clock' | 'contextBudget' | 'modelName' | 'onEvent'>;

/**
 * What follows a run once it is started: where it runs, its activity, and how to go on after a question.
 *
 * @example
 * ```ts
 * const parts: RunParts = { hosted, feed, chunks, environment, onQuestion: options.onQuestion };
 * ```
 */
export interface RunParts {
  readonly hosted: Hosted;
  readonly feed: ActivityFeed;
  readonly chunks: { unsubscribe(): void };
  readonly environment: Environment;
  readonly onQuestion: ExecuteOptions['onQuestion'];
  readonly repaired?: LogProblem;
}

/**
 * A stretch of a run about to start: where it runs, its caller's options, and what its log holds already.
 *
 * @example
 * ```ts
 * const launch: Launch = { hosted, traceId, options, contextBudget, logged: [] };
 * ```
 */
export interface Launch {
  readonly hosted: Hosted;
  readonly traceId: string;
  readonly options: Pick<ExecuteOptions, 'signal' | 'onEvent' | 'onActivity' | 'onQuestion'>;
  readonly contextBudget: ContextBudget | undefined;
  readonly logged: readonly AgentEvent[];
  readonly repaired?: LogProblem;
}

/**
 * What a run of a definition needs from this process: its actors, served, and a log.
 *
 * @example
 * ```ts
 * const hosted: Hosted = { served, tools, store, logPath: undefined, close: () => served.close() };
 * ```
 */
export interface Hosted {
  readonly served: ServedActors;
  /** The definition's tools as the run records them: every tool, the client's too, with its JSON Schema. */
  readonly tools: readonly ToolSpec[];
  readonly store: EventStore;
  readonly logPath: string | undefined;
  /** Closes the log (when opened here) and stops the actors. */
  close(): Promise<void>;
}
