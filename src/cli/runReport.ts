import path from 'node:path';
import type { EmbeddedRun } from '../host/embeddedFlowRun.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import { type ExitCode, exitCodeOf } from './exitCodes.js';
import { line, styles, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { formatOutcome } from './timeline.js';
import { reportWaiting } from './waitingReport.js';

/**
 * Shows how a run of this process settled: its answer or why it ended, and where its log is; or,
 * for a run that waits for an answer from outside, what it waits for and how to answer (exit
 * code 3). Ctrl-C meanwhile aborts the run.
 */
export async function report(run: EmbeddedRun, json: boolean, output: Output, progress: ReturnType<typeof createProgressPrinter>): Promise<ExitCode> {
  const onSignal = () => run.handle.abort('interrupted (SIGINT)');
  process.once('SIGINT', onSignal);
  try {
    let result;
    try {
      result = await run.finished();
    } catch (error) {
      if (!isRunWaiting(error)) throw error;
      progress.done();
      return reportWaiting(error, { log: run.logPath }, json, output);
    }
    progress.done();
    const s = styles(output.color);
    if (json) {
      line(
        output.out,
        JSON.stringify({ traceId: result.traceId, outcome: result.outcome, envelope: result.envelope, log: run.logPath, warnings: run.warnings }, null, 2),
      );
    } else {
      if (result.outcome.reason === 'final_answer') {
        line(output.out, result.outcome.answer ?? '');
        // A structured output that does not match the agent's outputSchema is still the answer, flagged.
        if (result.outcome.validated === false) line(output.err, formatOutcome(result.outcome, output.color));
      } else line(output.err, formatOutcome(result.outcome, output.color));
      // A stop condition's answer is what the run had: it is the run's output as much as a final one.
      if (result.outcome.status === 'done_partial' && result.outcome.answer !== undefined) line(output.out, result.outcome.answer);
      line(output.err, s.dim(`log: ${path.relative(process.cwd(), run.logPath) || run.logPath}   (redflow replay <log> shows it again)`));
    }
    return exitCodeOf(result.outcome);
  } finally {
    process.off('SIGINT', onSignal);
  }
}
