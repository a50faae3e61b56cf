// The seams' shapes, apart from their table (seams.ts), which loads the forking seams lazily:
// the seams import these types, and the table imports the seams.
import type { EvalCase } from './caseFile.js';

/** What a seam is given to make one case's eval run. */
export interface SeamLaunch {
  readonly evalCase: EvalCase;
  /** The flow to run: the changed one, or the case's recorded flow. */
  readonly flowPath: string;
  /** The eval run's log, to be written (it must not exist yet). */
  readonly logPath: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly allowFiles?: readonly string[];
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** What a seam that forks the recorded run reports: where it forked, and where each later tool call's result came from. */
export interface SeamOutcome {
  readonly forkedAt: number;
  readonly toolCalls: readonly { readonly iteration: number; readonly tool: string; readonly source: 'recorded' | 'live' }[];
}

/**
 * Makes one case's eval run and returns once its log is complete (ended, or parked on a wait).
 * Every seam goes through the library's run API (the run host's embedded run), never a lifecycle
 * of its own.
 */
export type SeamLauncher = (launch: SeamLaunch) => Promise<SeamOutcome | void>;
