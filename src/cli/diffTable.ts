import type { Difference, IterationDiff, IterationSide, OutcomeSide, RunDiff } from '../machines/runDiff.js';
import { styles } from './output.js';

/** Width of one run's column in `redflow diff`'s table. */
const COLUMN = 40;
/** Longest value a detail line prints of each run before cutting it. */
const VALUE_LIMIT = 160;

/**
 * Two runs side by side as lines for `redflow diff`: a header naming each run, one row per
 * iteration (the decision and tool, the model's and tool's time, the tokens), the outcome row,
 * then the first difference. The row of the first difference is marked `▶`; every row that
 * differs lists its fields, with each run's value beneath.
 *
 * @example
 * ```ts
 * for (const text of formatDiff(diffRuns(a, b), { a: 'a.jsonl', b: 'b.jsonl' }, false)) console.log(text);
 * ```
 */
export function formatDiff(diff: RunDiff, names: { readonly a: string; readonly b: string }, color: boolean): string[] {
  const s = styles(color);
  const lines = [
    s.bold(`a: ${diff.runs.a.traceId || '(no run)'}  ${names.a}  ${diff.runs.a.events} events`),
    s.bold(`b: ${diff.runs.b.traceId || '(no run)'}  ${names.b}  ${diff.runs.b.events} events`),
  ];
  for (const [side, run] of [['a', diff.runs.a], ['b', diff.runs.b]] as const) {
    if (run.ignoredEventTypes.length > 0) lines.push(s.dim(`${side}: left out (event types this version does not know): ${run.ignoredEventTypes.join(', ')}`));
  }
  lines.push('', s.dim(`       ${'a'.padEnd(COLUMN)}  ${'b'.padEnd(COLUMN)}  differs in`));
  const firstAt = diff.first?.iteration;
  for (const it of diff.iterations) lines.push(...iterationRow(it, it.iteration === firstAt, color));
  lines.push(...outcomeRow(diff, color));
  lines.push('', diff.first === null ? s.green('same: the runs do not differ (ids, times and durations aside)') : s.red(`differ: ${firstDifferenceText(diff.first)}`));
  return lines;
}

/** The first difference in words: `first at #2, input: a {"orderId":"A-1"}, b {"orderId":"A-2"}`. */
export function firstDifferenceText(first: Difference): string {
  const where = first.iteration === null ? 'the outcome' : `#${first.iteration}`;
  return `first at ${where}, ${first.field}: a ${valueText(first.a)}, b ${valueText(first.b)}`;
}

function iterationRow(it: IterationDiff, first: boolean, color: boolean): string[] {
  const s = styles(color);
  const mark = first ? s.red('▶') : ' ';
  const label = `#${it.iteration}`.padEnd(4);
  const fields = it.differences.length === 0 ? '' : s.red(`✖ ${it.differences.join(', ')}`);
  const row = `${mark} ${label} ${cell(it.a).padEnd(COLUMN)}  ${cell(it.b).padEnd(COLUMN)}  ${fields}`.trimEnd();
  const details = it.differences
    .filter((field) => field !== 'decision' && field !== 'tool')
    .map((field) => s.dim(`         ${field}: a ${valueText(it.a?.[field] ?? null)} | b ${valueText(it.b?.[field] ?? null)}`));
  return [row, ...details];
}

function outcomeRow(diff: RunDiff, color: boolean): string[] {
  const s = styles(color);
  const { a, b, differences } = diff.outcome;
  const mark = diff.first !== null && diff.first.iteration === null ? s.red('▶') : ' ';
  const fields = differences.length === 0 ? '' : s.red(`✖ ${differences.join(', ')}`);
  const row = `${mark} ${'end'.padEnd(4)} ${outcomeCell(a).padEnd(COLUMN)}  ${outcomeCell(b).padEnd(COLUMN)}  ${fields}`.trimEnd();
  const details = differences.includes('answer') ? [s.dim(`         answer: a ${valueText(a?.answer ?? null)} | b ${valueText(b?.answer ?? null)}`)] : [];
  return [row, ...details];
}

/** One run's side of a row: `tool lookup_order  3 ms  120/18 tok`, or `—` when the run has no such iteration. */
function cell(side: IterationSide | null): string {
  if (side === null) return '—';
  const what = side.tool === null ? side.decision : `${side.decision} ${side.tool}`;
  const ms = (side.modelMs ?? 0) + (side.toolMs ?? 0);
  const tokens = side.tokens === null ? '' : `  ${side.tokens.prompt}/${side.tokens.completion} tok`;
  const failed = isFailure(side.observation) ? ' ✖' : '';
  return fit(`${fit(what + failed, 24).padEnd(24)} ${`${Math.round(ms)} ms`.padStart(7)}${tokens}`, COLUMN);
}

function outcomeCell(side: OutcomeSide | null): string {
  return side === null ? 'unfinished' : fit(`${side.status} (${side.reason})`, COLUMN);
}

function isFailure(observation: unknown): boolean {
  return typeof observation === 'object' && observation !== null && (observation as { ok?: unknown }).ok === false;
}

function valueText(value: unknown): string {
  return fit(JSON.stringify(value) ?? 'null', VALUE_LIMIT);
}

function fit(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
