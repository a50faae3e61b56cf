import type { AgentEvent } from '../events/eventTypes.js';
import type { JsonlFsyncMode } from '../events/jsonlEventStore.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import type { DescribedDiagnostic } from './agentGeneration.js';
import type { NatsLogSettings } from './jetStreamRunLogs.js';
import type { DoneFunction, NodeRedMessage, SendFunction } from './nodeRedApi.js';
import type { RecentRun } from './recentRuns.js';

// What an agent node's runtime offers its node and Redflow's editor, and the settings it reads
// (the runtime itself is agentHost.ts).

/** The Redflow settings Node-RED's `settings.js` may hold, as `redflow: { … }`. */
export interface RedflowNodeRedSettings {
  /** Where the agents keep their runs' logs; default `<userDir>/redflow/runs`. */
  readonly runsDir?: string;
  /** Folders besides the user directory where flows may name files (tool modules, answers, memory). */
  readonly allowFiles?: readonly string[];
  /** When the logs are synced to disk (default `always`, as `redflow run`). */
  readonly fsync?: JsonlFsyncMode;
  /** How long a stop waits for a tool call under way (default {@link CLOSE_GRACE_MS}). */
  readonly closeGraceMs?: number;
  /** Keep the logs in JetStream on this NATS server instead of files (`runsDir` is then unused). */
  readonly nats?: NatsLogSettings;
}

/** What the editor shows of a deployed agent. */
export interface AgentDescription {
  readonly id: string;
  /** The tab (flow) it is on. */
  readonly tab?: string;
  /** Where its runs' logs are: a folder of `<traceId>.jsonl` files, or a JetStream stream. */
  readonly logs: string;
  readonly errors: readonly DescribedDiagnostic[];
  readonly warnings: readonly DescribedDiagnostic[];
  /** Trace ids of the runs under way. */
  readonly running: readonly string[];
}

/** What starts a run from outside a flow (Redflow's editor, through the admin API). */
export interface AgentRunRequest {
  readonly input: unknown;
  readonly conversationId?: string;
  readonly timeoutMs?: number;
}

/** A run's events as the agent has them, and whether it is under way here. */
export interface AgentRunEvents {
  readonly events: readonly AgentEvent[];
  readonly running: boolean;
}

/** An agent node's runtime: its wiring check, its actors, its runs. */
export interface AgentHost {
  /** Starts a run with `msg.payload` as its input; the answer leaves on the first output. */
  input(msg: NodeRedMessage, send: SendFunction, done: DoneFunction): void;
  /**
   * Starts a run without a message (Redflow's editor's Run): resolves with its trace id once its
   * first event is in the log; its answer leaves on the first output as a new message.
   */
  start(request: AgentRunRequest): Promise<{ readonly traceId: string }>;
  /** The run's events after `afterSeq`, or `undefined` when the agent has no such run. */
  events(traceId: string, afterSeq: number): Promise<AgentRunEvents | undefined>;
  /** Resolves once the run has an event after `afterSeq`, is no longer under way, or `waitMs` passed. */
  waitForEvents(traceId: string, afterSeq: number, waitMs: number): Promise<void>;
  /** Aborts a run under way or parked in a wait. */
  abort(traceId: string, reason: string): Promise<'aborting' | 'finished' | 'unknown'>;
  /**
   * Answers the wait of a run parked in its log (an approval, a client tool's result, a person's
   * answer): the run goes on here. Throws `RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`,
   * `WAIT_ANSWER_MISMATCH`, `RUN_ALREADY_FINISHED` for an answer the wait does not take, and
   * `WAIT_EXPIRED` past its deadline (the run then ends blocked).
   */
  answer(traceId: string, answer: WaitAnswer): Promise<'answered' | 'unknown'>;
  /**
   * Stops the agent. On a redeploy or a stop (`removed` false) runs are stopped without an ending
   * and go on when the agent starts again; when the node is deleted they are aborted.
   */
  close(removed: boolean): Promise<void>;
  describe(): AgentDescription;
  /** Its newest runs, from their logs. */
  recentRuns(limit: number): Promise<RecentRun[]>;
}
