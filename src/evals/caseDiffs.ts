import path from 'node:path';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { diffRuns, type RunDiff } from '../machines/runDiff.js';
import type { EvalReport } from './report.js';

/**
 * Each case's eval run compared with its recorded run ({@link diffRuns}), by case name, for the
 * cases whose two logs are both there and readable; a case without one is left out (an error row
 * whose run never started, a log moved since). Reads the logs the report names.
 *
 * @example
 * ```ts
 * const report = await runEvalSuite({ suite: 'evals/orders', flowPath: 'flow.changed.json' });
 * await writeFile('eval.html', reportHtml(report, '.', await readCaseDiffs(report)));
 * ```
 */
export async function readCaseDiffs(report: Pick<EvalReport, 'cases'>): Promise<ReadonlyMap<string, RunDiff>> {
  const diffs = new Map<string, RunDiff>();
  // One case at a time: a suite's logs are small, and a report is written once.
  for (const row of report.cases) {
    const recorded = row.recorded?.log;
    const evalLog = row.eval?.log;
    if (recorded === undefined || evalLog === undefined) continue;
    const [a, b] = await Promise.all([readEvents(recorded), readEvents(evalLog)]);
    if (a !== undefined && b !== undefined) diffs.set(row.name, diffRuns(a, b));
  }
  return diffs;
}

/** A log's events, or undefined when it is missing, unreadable or holds none (its case gets no diff). */
async function readEvents(file: string) {
  try {
    const { events } = await readJsonlLog(path.resolve(file));
    return events.length > 0 ? events : undefined;
  } catch {
    return undefined;
  }
}
