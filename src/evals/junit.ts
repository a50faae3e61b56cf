import type { CaseRow, EvalReport } from './report.js';
import { formatScore } from './report.js';

/** Escapes text for an XML attribute or element. */
export function escapeXml(text: string): string {
  // Characters XML 1.0 cannot hold at all are dropped (a model's answer may carry them).
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

function testCase(row: CaseRow, suiteName: string): string {
  const head = `    <testcase name="${escapeXml(row.name)}" classname="${escapeXml(suiteName)}" time="${(row.durationMs / 1000).toFixed(3)}">`;
  const lines = row.checks.map((check) => `${check.pass ? 'ok  ' : 'FAIL'} ${check.name} ${formatScore(check.score)}: ${check.detail}`);
  if (row.result === 'error') {
    const error = row.error;
    return `${head}\n      <error type="${escapeXml(error?.code ?? 'ERROR')}" message="${escapeXml(error?.message ?? 'error')}">${escapeXml(error?.hint ?? '')}</error>\n    </testcase>`;
  }
  const out = `      <system-out>${escapeXml(`score ${formatScore(row.score)}\n${lines.join('\n')}`)}</system-out>`;
  if (row.result === 'fail') {
    const failedChecks = row.checks.filter((check) => !check.pass);
    const message = `score ${formatScore(row.score)}: ${failedChecks.map((check) => check.name).join(', ')}`;
    return `${head}\n      <failure type="eval" message="${escapeXml(message)}">${escapeXml(failedChecks.map((check) => `${check.name}: ${check.detail}`).join('\n'))}</failure>\n${out}\n    </testcase>`;
  }
  return `${head}\n${out}\n    </testcase>`;
}

/**
 * A report as JUnit XML, for CI: one `<testcase>` per case, a failed case with a `<failure>`
 * (its failed checks), a broken one with an `<error>` (its code and message).
 *
 * @example
 * ```ts
 * await writeFile('eval.junit.xml', junitXml(report));
 * ```
 */
export function junitXml(report: EvalReport): string {
  const name = `redflow eval ${report.suite.split(/[\\/]/).at(-1) ?? report.suite}`;
  const seconds = Math.max(0, Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000;
  const { total, failed, errors } = report.counts;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(name)}" tests="${total}" failures="${failed}" errors="${errors}" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="${escapeXml(name)}" tests="${total}" failures="${failed}" errors="${errors}" skipped="0" time="${seconds.toFixed(3)}" timestamp="${escapeXml(report.startedAt)}">`,
    '    <properties>',
    `      <property name="score" value="${formatScore(report.score)}"/>`,
    `      <property name="seam" value="${escapeXml(report.seam)}"/>`,
    `      <property name="tokens.eval" value="${report.tokens.eval}"/>`,
    `      <property name="tokens.recorded" value="${report.tokens.recorded}"/>`,
    '    </properties>',
    ...report.cases.map((row) => testCase(row, name)),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
