import type { AgentEvent } from '../events/eventTypes.js';
import type { EventStore } from '../events/eventStore.js';
import type { RecentRun } from './recentRuns.js';

/** Where one run's events go, and where to read them again. */
export interface RunLog {
  readonly store: EventStore;
  /** The JSONL file, for a run logged to a file. */
  readonly logPath?: string;
  /** The JetStream stream, for a run logged to JetStream. */
  readonly stream?: string;
  /** Releases the log (a file's lock); the run must have ended or stopped. */
  close(): Promise<void>;
}

/** A run its agent left unfinished, read back from its log and ready to continue. */
export interface UnfinishedRun {
  readonly traceId: string;
  readonly events: readonly AgentEvent[];
  readonly log: RunLog;
}

/**
 * The logs of one agent's runs: JSONL files in its folder under the user directory, or a JetStream
 * stream when `settings.js` names a NATS server (`redflow.nats`).
 */
export interface RunLogs {
  /** Where they are, for people: a folder, or a stream on a server. */
  readonly where: string;
  /** Opens the log of a new run. */
  create(traceId: string): Promise<RunLog>;
  /** The events of one of the agent's runs as its log holds them, or `undefined` when it has no such run. */
  read(traceId: string): Promise<readonly AgentEvent[] | undefined>;
  /** Opens the log of one of the agent's runs to go on with it (a run parked in a wait, answered). */
  reopen(traceId: string): Promise<RunLog>;
  /**
   * The agent's runs whose logs stop before their ending, oldest first, each read back (a torn
   * last record cut off) and opened to continue. A damaged log is reported and skipped.
   */
  unfinished(onProblem: (where: string, error: unknown) => void): AsyncIterable<UnfinishedRun>;
  /** The agent's newest runs, as its Runtime / Debug tab lists them. */
  recent(running: ReadonlySet<string>, limit: number): Promise<RecentRun[]>;
  close(): Promise<void>;
}
