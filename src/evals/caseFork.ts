import path from 'node:path';
import type { RunDiff } from '../machines/runDiff.js';
import type { CaseRow } from './report.js';

/** A path as the user would type it: relative to the current folder when under it. */
export function typedPath(file: string): string {
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
 * The `redflow fork` command that starts again from a failed case's recorded run at the iteration
 * where its eval run first went otherwise, with the flow that was evaluated; null when the case has
 * no recorded log or its two runs did the same. The terminal report and the HTML page print this one.
 *
 * @example
 * ```ts
 * caseForkCommand(row, diff, 'flow.changed.json');
 * // redflow fork evals/orders/three.jsonl --at 2 --flow flow.changed.json --model <json> --log runs/three-fork.jsonl
 * ```
 */
export function caseForkCommand(row: Pick<CaseRow, 'name' | 'recorded'>, diff: RunDiff, flow: string | undefined): string | null {
  const first = wentWrong(diff);
  if (first === null || row.recorded?.log === undefined) return null;
  const flowOption = flow === undefined ? '' : ` --flow ${typedPath(flow)}`;
  return `redflow fork ${typedPath(row.recorded.log)} --at ${forkPoint(diff, first.iteration)}${flowOption} --model <json> --log runs/${row.name}-fork.jsonl`;
}
