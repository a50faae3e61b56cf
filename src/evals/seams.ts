import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { runFlowFile } from '../host/embeddedFlowRun.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import type { EvalSeam } from './report.js';
import type { SeamLauncher } from './seamTypes.js';

/** `start`: the flow runs live from its beginning, with the recorded run's input. */
const fromStart: SeamLauncher = async (launch) => {
  if (launch.fork !== undefined) {
    // Elsewhere (a cluster), every eval run is a fork: at iteration 1, the recorded input, nothing scripted.
    const { evalCase, flowPath, logPath, fork, ...rest } = launch;
    await fork({ from: evalCase.logFile, at: 1, flow: flowPath, logPath, ...rest });
    return;
  }
  const run = await runFlowFile({
    flowPath: launch.flowPath,
    input: launch.evalCase.recorded.input,
    logPath: launch.logPath,
    // An eval run's log is a report's evidence, not a run to resume after a crash.
    fsync: 'never',
    ...(launch.env !== undefined && { env: launch.env }),
    ...(launch.allowFiles !== undefined && { allowFiles: launch.allowFiles }),
    ...(launch.timeoutMs !== undefined && { timeoutMs: launch.timeoutMs }),
    ...(launch.signal !== undefined && { signal: launch.signal }),
  });
  try {
    await run.finished();
  } catch (error) {
    // A run parked on an approval or an answer is scored as it stands: its log says `waiting`.
    if (!isRunWaiting(error)) throw error;
  }
};

/**
 * The launcher of each seam: `start` runs the flow from its beginning; `model` (the recorded
 * prefix up to the last model call, that call live, the rest scripted from the record) and `all`
 * (forked at iteration 1, the rest live, recorded tool results where the call matches) fork the
 * case's recorded run with `forkRun` (./forkSeams.ts, loaded when used).
 */
const LAUNCHERS: { readonly [S in EvalSeam]: SeamLauncher | undefined } = {
  start: fromStart,
  model: async (launch) => (await import('./forkSeams.js')).fromLastModelCall(launch),
  all: async (launch) => (await import('./forkSeams.js')).allLive(launch),
};

/** The seams `redflow eval --seam` takes. */
export const EVAL_SEAMS: readonly EvalSeam[] = ['start', 'model', 'all'];

/**
 * The launcher of a seam.
 *
 * @throws RedflowError `EVAL_SEAM_UNAVAILABLE` for a seam that does not exist.
 *
 * @example
 * ```ts
 * const launch = seamLauncher('start');
 * await launch({ evalCase, flowPath: 'flow.json', logPath: 'out/order-1.jsonl' });
 * ```
 */
export function seamLauncher(seam: string): SeamLauncher {
  const launcher = (LAUNCHERS as Record<string, SeamLauncher | undefined>)[seam];
  if (launcher !== undefined) return launcher;
  const known = EVAL_SEAMS.includes(seam as EvalSeam);
  throw new RedflowError(
    errorInfo(ErrorCode.EVAL_SEAM_UNAVAILABLE, known ? `the seam "${seam}" is not available` : `there is no seam "${seam}"`, {
      hint: '--seam takes start (live from the start), model (the last model call live) or all (forked at iteration 1, recorded tool results where calls match)',
    }),
  );
}
