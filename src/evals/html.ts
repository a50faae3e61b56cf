import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CaseRow, EvalReport } from './report.js';
import { formatScore } from './report.js';
import type { RunDiff } from '../machines/runDiff.js';
import { diffAnchor, diffSection, escapeHtml, firstDifferenceLabel } from './htmlDiff.js';
import { caseForkCommand } from './caseFork.js';
import { dollars } from './scoreRun.js';

/** US dollars after the tokens, where the run had a price. */
function cost(usd: number | undefined): string {
  return usd === undefined ? '' : ` $${dollars(usd)}`;
}

function tokens(row: CaseRow): string {
  const recorded = row.recorded?.tokens;
  const now = row.eval?.tokens;
  if (now === undefined) return '';
  return recorded === undefined ? `${now}${cost(row.eval?.costUsd)}` : `${now}${cost(row.eval?.costUsd)} <small>(recorded ${recorded}${cost(row.recorded?.costUsd)})</small>`;
}

function caseRow(row: CaseRow, from: string | undefined, diff: RunDiff | undefined): string {
  const checks = row.error
    ? `<span class="code">${escapeHtml(row.error.code)}</span> ${escapeHtml(row.error.message)}`
    : row.checks.map((check) => `<div class="${check.pass ? 'ok' : 'bad'}">${check.pass ? '✔' : '✖'} ${escapeHtml(check.name)} ${formatScore(check.score)}: ${escapeHtml(check.detail)}</div>`).join('');
  // The logs, relative to the report when it is written to a file, and the diff of the two below the table.
  const href = (log: string) => (from === undefined ? pathToFileURL(log).href : path.relative(from, log).split(path.sep).join('/'));
  const links = [
    ...(row.recorded?.log !== undefined ? [`<a href="${escapeHtml(href(row.recorded.log))}">recorded</a>`] : []),
    ...(row.eval?.log !== undefined ? [`<a href="${escapeHtml(href(row.eval.log))}">log</a>`] : []),
    ...(diff !== undefined ? [`<a href="#${diffAnchor(row.name)}">diff</a> <small>(${escapeHtml(firstDifferenceLabel(diff))})</small>`] : []),
  ].join(' · ');
  return `<tr class="${row.result}"><td>${escapeHtml(row.name)}</td><td class="result">${row.result}</td><td class="num">${formatScore(row.score)}</td><td>${checks}</td><td>${escapeHtml(row.recorded?.status ?? '')} → ${escapeHtml(row.eval?.status ?? '')}</td><td class="num">${tokens(row)}</td><td>${links}</td></tr>`;
}

/** The `redflow fork` command of a failed case, as `redflow eval` prints it; none for a case that passed. */
function forkOf(row: CaseRow, diff: RunDiff, flow: string | undefined): string | null {
  return row.result === 'fail' ? caseForkCommand(row, diff, flow) : null;
}

/**
 * A report as one self-contained HTML page (no script, no outside file): the suite's score and
 * tokens, then one row per case with its checks, its status before and after, its tokens beside
 * the recorded run's and a link to its eval log. `at` is the folder the page is written to, to
 * link the logs relatively. With `diffs` (`readCaseDiffs`), each case that has one gets a link
 * to a section below the table: its eval run against its recorded run, iteration by iteration,
 * the first difference marked, and for a failed case the `redflow fork` command that starts again
 * from its recorded run there.
 *
 * @example
 * ```ts
 * await writeFile('eval.html', reportHtml(report, '.', await readCaseDiffs(report)));
 * ```
 */
export function reportHtml(report: EvalReport, at?: string, diffs: ReadonlyMap<string, RunDiff> = new Map()): string {
  const { total, passed, failed, errors } = report.counts;
  const from = at === undefined ? undefined : path.resolve(at);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redflow eval: ${escapeHtml(path.basename(report.suite))}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.4em .6em;text-align:left;vertical-align:top}th{background:#f4f4f4}
.num{text-align:right;font-variant-numeric:tabular-nums}.pass .result{color:#18794e}.fail .result{color:#b42318}.error .result{color:#b54708}
.ok{color:#18794e}.bad{color:#b42318}.code{font-family:monospace;background:#fef0c7;padding:0 .3em}small{color:#666}
section{margin-top:2em}h2{font-size:1.1em}code{font-size:12px;word-break:break-all}.diff tr.differs{background:#fff6f5}.diff tr.first td:first-child{color:#b42318;font-weight:bold}
</style></head><body>
<h1>redflow eval: ${escapeHtml(path.basename(report.suite))}</h1>
<p>score <strong>${formatScore(report.score)}</strong> · ${total} cases: ${passed} passed, ${failed} failed, ${errors} errors · seam ${escapeHtml(report.seam)}${report.flow ? ` · flow ${escapeHtml(report.flow)}` : ''}</p>
<p>tokens: ${report.tokens.eval}${cost(report.cost?.eval)} (recorded runs ${report.tokens.recorded}${cost(report.cost?.recorded)}${report.tokens.judge > 0 ? `, judges ${report.tokens.judge}` : ''}) · ${escapeHtml(report.startedAt)} – ${escapeHtml(report.finishedAt)}</p>
<table><thead><tr><th>case</th><th>result</th><th>score</th><th>checks</th><th>status</th><th>tokens</th><th>run</th></tr></thead>
<tbody>
${report.cases.map((row) => caseRow(row, from, diffs.get(row.name))).join('\n')}
</tbody></table>
${report.cases.flatMap((row) => { const diff = diffs.get(row.name); return diff === undefined ? [] : [diffSection(row.name, diff, forkOf(row, diff, report.flow))]; }).join('\n')}
</body></html>
`;
}
