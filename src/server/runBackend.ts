import type { InspectionEvent } from 'xstate';
import type { FlowDefinition } from '../contracts/schema-types.js';
import type { RunLiveMessage } from '../runtime/serveActors.js';
import type { FollowOptions } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import type { RunResponse, RunSummary } from './apiTypes.js';

/** What `POST /api/runs` asks a backend to start, once the flow has been found and validated. */
export interface BackendStartRequest {
  /** The flow's id in the flows directory. */
  readonly flowId: string;
  /** The flow file's absolute path. */
  readonly flowPath: string;
  readonly flow: FlowDefinition;
  readonly input: unknown;
  readonly conversationId?: string;
  readonly timeoutMs?: number;
  /** The run's trace id (an A2A task id); a new one when absent. A backend that cannot take it refuses. */
  readonly traceId?: string;
}

/** What `POST /api/runs` asks a backend to start for an `.agent.md` agent of the flows directory. */
export interface BackendAgentStartRequest {
  /** The agent's id in the flows directory (its path, `.agent.md` included). */
  readonly agentId: string;
  /** The agent file's absolute path. */
  readonly agentPath: string;
  /** The agent's inputs by name (a JSON object). */
  readonly inputs: Readonly<Record<string, unknown>>;
}

/**
 * What `POST /api/runs/:traceId/fork` asks a backend to start: a fork of a run of its own.
 *
 * @example
 * ```ts
 * const forked = await backend.fork?.({ parent: traceId, at: 2, answers: { 2: { action: 'final', message: 'done', confidence: 1 } } });
 * ```
 */
export interface BackendForkRequest {
  /** The parent run's trace id. */
  readonly parent: string;
  readonly at: number;
  readonly model?: Record<string, unknown>;
  readonly prompt?: string;
  readonly answers?: Readonly<Record<number, unknown>>;
  readonly toolResults?: Readonly<Record<number, unknown>>;
}

/** What a backend answers to an abort. */
export type AbortAnswer = 'aborting' | 'finished' | 'unknown';

/**
 * Where `redflow serve` runs flows: in its own process (embedded, JSONL logs), on a NATS cluster
 * of workers (JetStream logs), or in a Node-RED (its agents' logs). The HTTP layer speaks only to this interface.
 */
export interface RunBackend {
  readonly mode: 'embedded' | 'nats' | 'node-red';
  /** Starts a run; resolves once its first event is in the log. */
  start(request: BackendStartRequest): Promise<{ readonly traceId: string }>;
  /** Starts a run of an `.agent.md` agent (as `redflow run <file>.agent.md` does); absent where agents do not run. */
  startAgent?(request: BackendAgentStartRequest): Promise<{ readonly traceId: string }>;
  /**
   * Starts a fork of one of its runs (as `forkRun` does); resolves once the fork's log is written.
   * Resolves `undefined` for an unknown parent. Absent where runs cannot be forked.
   */
  fork?(request: BackendForkRequest): Promise<{ readonly traceId: string } | undefined>;
  /** The run's summary and envelope (the fold of its log), or `undefined` for an unknown trace id. */
  get(traceId: string): Promise<RunResponse | undefined>;
  /** The run's events after `afterSeq` as stored so far, or `undefined` for an unknown trace id. */
  events(traceId: string, afterSeq: number): Promise<readonly AgentEvent[] | undefined>;
  /**
   * Every event of the run after `afterSeq`, in seq order and each exactly once: the stored ones,
   * then the live ones as they are appended, until the run's last event, as its event store's
   * `follow` gives them (see `EventStore.follow`). It also ends when `options.signal` aborts (a
   * run that will not go on, a client gone) or the backend closes. A trace id with no run yet is
   * waited for: ask `get` first.
   */
  follow(traceId: string, afterSeq: number, options?: FollowOptions): AsyncIterable<AgentEvent>;
  /**
   * Calls `onChunk` with each piece of the run's answers as the model streams it, from now on
   * (pieces are not stored: a run that is not under way has none). Returns a function that stops.
   */
  followChunks?(traceId: string, onChunk: (chunk: RunLiveMessage) => void): () => void;
  /** Runs, newest first. */
  list(options: { readonly flow?: string; readonly limit: number }): Promise<readonly RunSummary[]>;
  abort(traceId: string, reason?: string): Promise<AbortAnswer>;
  /**
   * Answers the wait of a run parked in its log (an approval, a client tool's result): the run
   * resumes and takes it. Resolves `answered` once the run goes on, `unknown` for a trace id with
   * no run; refuses an answer the wait does not take by throwing `RUN_NOT_WAITING`,
   * `WAIT_ALREADY_ANSWERED`, `WAIT_ANSWER_MISMATCH` or `RUN_ALREADY_FINISHED` (each a 409).
   */
  answer(traceId: string, answer: WaitAnswer): Promise<'answered' | 'unknown'>;
  /** Stops following runs; embedded runs under way are aborted and their logs closed. */
  close(): Promise<void>;
}

/** Gives a run's statechart an inspection observer (the Stately inspector), or none. */
export type InspectorFactory = (traceId: string) => ((event: InspectionEvent) => void) | undefined;
