import path from 'node:path';
import type { RunDiff } from '../machines/runDiff.js';
import type { CaseRow, EvalReport } from '../evals/report.js';

/** A value of a difference as one short line: its JSON, cut at 60 characters. */
function shortValue(value: unknown): string {
  const text = value === undefined ? 'none' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** A path as the user would type it: relative to the current folder when under it. */
function typed(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') ? file : relative;
}

/**
 * The first difference in what two runs did, tokens aside (two models never spend the same): the
 * iteration (null for the outcome), the field, and each run's value there; null when they did the same.
 *
 * @example
 * ```ts
 * wentWrong(diffRuns(recorded, evaluated)); // { iteration: 2, field: 'decision', a: 'tool', b: 'final' }
 * ```
 */
export function wentWrong(diff: RunDiff): { iteration: number | null; field: string; a: unknown; b: unknown } | null {
  for (const it of diff.iterations) {
    const field = it.differences.find((name) => name !== 'tokens');
    if (field !== undefined) return { iteration: it.iteration, field, a: it.a?.[field] ?? null, b: it.b?.[field] ?? null };
  }
  const field = diff.outcome.differences[0];
  return field === undefined ? null : { iteration: null, field, a: diff.outcome.a?.[field] ?? null, b: diff.outcome.b?.[field] ?? null };
}

/** The iteration to fork at: the first that went otherwise, or the eval run's last when only the outcome did. */
function forkPoint(diff: RunDiff, iteration: number | null): number {
  return iteration ?? Math.max(1, diff.iterations.filter((it) => it.b !== null).length);
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
  let worst: { row: CaseRow; diff: RunDiff; iteration: number | null } | undefined;
  for (const row of failed) {
    const diff = diffs.get(row.name);
    if (diff === undefined || row.recorded?.log === undefined || row.eval === undefined) continue;
    const compare = `(redflow diff ${typed(row.recorded.log)} ${typed(row.eval.log)})`;
    const first = wentWrong(diff);
    const where = first === null ? 'the eval run did what the recorded run did' : `first difference at ${first.iteration === null ? 'the end' : `#${first.iteration}`}, ${first.field}: recorded ${shortValue(first.a)}, eval ${shortValue(first.b)}`;
    lines.push(`why ${row.name} ${row.score.toFixed(3)}: ${where} ${compare}`);
    if (worst === undefined && first !== null) worst = { row, diff, iteration: first.iteration };
  }
  if (worst?.row.recorded?.log !== undefined) {
    const flow = report.flow === undefined ? '' : ` --flow ${typed(report.flow)}`;
    lines.push(`fork it there: redflow fork ${typed(worst.row.recorded.log)} --at ${forkPoint(worst.diff, worst.iteration)}${flow} --model <json> --log runs/${worst.row.name}-fork.jsonl`);
  }
  return lines;
}
