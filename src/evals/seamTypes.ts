// The seams' shapes, apart from their table (seams.ts), which loads the forking seams lazily:
// the seams import these types, and the table imports the seams.
import type { ForkPlanOptions } from '../host/forkPlan.js';
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
  /** Makes the eval run as a fork somewhere else (a cluster) instead of a run of this process. */
  readonly fork?: EvalFork;
}

/**
 * What an {@link EvalFork} is asked for: a fork of the case's recorded log (`from`), whose log
 * must be at `logPath` once it returns.
 *
 * @example
 * ```ts
 * const options: EvalForkOptions = { from: 'evals/orders/late.jsonl', at: 1, flow: 'flow.json', logPath: 'out/late.jsonl' };
 * ```
 */
export interface EvalForkOptions extends ForkPlanOptions {
  readonly from: string;
  readonly logPath: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Makes one case's eval run as a fork and returns once it has ended (or parked on a wait), its log
 * written at `logPath`: how `redflow eval --nats` runs each case on a cluster. Every seam is then a
 * fork (`start` a fork at iteration 1, with no changes).
 *
 * @example
 * ```ts
 * const report = await runEvalSuite({ suite: 'evals/orders', seam: 'all', fork: clusterFork });
 * ```
 */
export type EvalFork = (options: EvalForkOptions) => Promise<void>;

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
