import type { IterationSide, OutcomeSide, RunDiff } from '../machines/runDiff.js';

/** Longest value a diff's cell prints before cutting it. */
const VALUE_LIMIT = 300;

/** Text made safe for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** The id of a case's diff section in the report page (a case's name may hold any character). */
export function diffAnchor(name: string): string {
  return `diff-${encodeURIComponent(name).replace(/%/g, '_')}`;
}

/** The first difference in words, `#2 input`, or `same`. */
export function firstDifferenceLabel(diff: RunDiff): string {
  if (diff.first === null) return 'same';
  return `${diff.first.iteration === null ? 'outcome' : `#${diff.first.iteration}`} ${diff.first.field}`;
}

/**
 * A case's diff as a section of the report page: one row per iteration with the recorded run and
 * the eval run side by side, the row of the first difference marked, the fields that differ
 * named, and the outcome last; `fork`, the command that starts again from the recorded run at the
 * first difference, printed under the summary.
 */
export function diffSection(name: string, diff: RunDiff, fork: string | null = null): string {
  const first = diff.first;
  const rows = diff.iterations.map((it) => {
    const marked = first !== null && first.iteration === it.iteration;
    return row(`#${it.iteration}`, side(it.a), side(it.b), it.differences, marked);
  });
  rows.push(row('end', outcome(diff.outcome.a), outcome(diff.outcome.b), diff.outcome.differences, first !== null && first.iteration === null));
  const summary = first === null
    ? '<p class="ok">same: the eval run does not differ from the recorded run (ids, times and durations aside)</p>'
    : `<p class="bad">first difference at ${escapeHtml(firstDifferenceLabel(diff))}: recorded <code>${value(first.a)}</code>, eval <code>${value(first.b)}</code></p>`;
  return `<section id="${diffAnchor(name)}"><h2>${escapeHtml(name)}: eval run against recorded run</h2>
${summary}${fork === null ? '' : `\n<p>fork it there: <code>${escapeHtml(fork)}</code></p>`}
<table class="diff"><thead><tr><th></th><th>recorded</th><th>eval</th><th>differs in</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table></section>`;
}

function row(label: string, a: string, b: string, differences: readonly string[], marked: boolean): string {
  const mark = marked ? '▶ ' : '';
  return `<tr class="${differences.length > 0 ? 'differs' : 'same'}${marked ? ' first' : ''}"><td>${mark}${label}</td><td>${a}</td><td>${b}</td><td class="bad">${escapeHtml(differences.join(', '))}</td></tr>`;
}

function side(it: IterationSide | null): string {
  if (it === null) return '—';
  const parts = [escapeHtml(it.tool === null ? it.decision : `${it.decision} ${it.tool}`)];
  if (it.tool !== null) parts.push(`<small>input</small> <code>${value(it.input)}</code>`, `<small>result</small> <code>${value(it.observation)}</code>`);
  else if (it.observation !== null) parts.push(`<small>answered</small> <code>${value(it.observation)}</code>`);
  const facts = [`${Math.round((it.modelMs ?? 0) + (it.toolMs ?? 0))} ms`];
  if (it.tokens !== null) facts.push(`${it.tokens.prompt}/${it.tokens.completion} tokens`);
  parts.push(`<small>${facts.join(' · ')}</small>`);
  return parts.join('<br>');
}

function outcome(it: OutcomeSide | null): string {
  if (it === null) return 'unfinished';
  const answer = it.answer === null ? '' : `<br><small>answer</small> ${escapeHtml(cut(it.answer))}`;
  return `${escapeHtml(`${it.status} (${it.reason})`)}${answer}`;
}

function value(data: unknown): string {
  return escapeHtml(cut(JSON.stringify(data) ?? 'null'));
}

function cut(text: string): string {
  return text.length <= VALUE_LIMIT ? text : `${text.slice(0, VALUE_LIMIT - 1)}…`;
}
