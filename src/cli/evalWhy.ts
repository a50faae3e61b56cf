import type { RunDiff } from '../machines/runDiff.js';
import type { CaseRow, EvalReport } from '../evals/report.js';
import { caseForkCommand, typedPath as typed, wentWrong } from '../evals/caseFork.js';

/** A value of a difference as one short line: its JSON, cut at 60 characters. */
function shortValue(value: unknown): string {
  const text = value === undefined ? 'none' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * Why each failed case failed, worst first: where its eval run first parted from its recorded run
 * (`redflow diff` of the two logs, tokens aside), then, for the worst case, the `redflow fork` command that
 * starts again from the recorded run at that iteration, with the flow that was evaluated. The
 * checks say what is wrong; the first difference says at which decision it went wrong.
 *
 * @example
 * ```ts
 * for (const text of whyLines(report, await readCaseDiffs(report))) console.error(text);
 * // why three 0.500: first difference at #2, decision: recorded "tool", eval "final" (redflow diff evals/orders/three.jsonl evals/runs/three.jsonl)
 * // fork it there: redflow fork evals/orders/three.jsonl --at 2 --flow flow.changed.json --model <json> --log runs/three-fork.jsonl
 * ```
 */
export function whyLines(report: Pick<EvalReport, 'cases' | 'flow'>, diffs: ReadonlyMap<string, RunDiff>): string[] {
  const failed = report.cases.filter((row) => row.result === 'fail').sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  const lines: string[] = [];
  let worst: { row: CaseRow; diff: RunDiff } | undefined;
  for (const row of failed) {
    const diff = diffs.get(row.name);
    if (diff === undefined || row.recorded?.log === undefined || row.eval === undefined) continue;
    const compare = `(redflow diff ${typed(row.recorded.log)} ${typed(row.eval.log)})`;
    const first = wentWrong(diff);
    const where = first === null ? 'the eval run did what the recorded run did' : `first difference at ${first.iteration === null ? 'the end' : `#${first.iteration}`}, ${first.field}: recorded ${shortValue(first.a)}, eval ${shortValue(first.b)}`;
    lines.push(`why ${row.name} ${row.score.toFixed(3)}: ${where} ${compare}`);
    if (worst === undefined && first !== null) worst = { row, diff };
  }
  const command = worst === undefined ? null : caseForkCommand(worst.row, worst.diff, report.flow);
  if (command !== null) lines.push(`fork it there: ${command}`);
  return lines;
}
