#!/usr/bin/env node
// Prints the time each test file took, from the JUnit reports vitest wrote in CI's test passes
// (`--reporter=junit`): the N slowest files of all reports (default 15), or with --all every file
// of each report, slowest first. A file's time is its tests' and hooks' (vitest's file duration;
// collecting it — importing its modules — is not counted). Then, last (CI logs are often read
// from their end), each failed test with the first lines of its failure, so a failure that does
// not recur on another machine can still be read. Usage: test-times.mjs [--all] [--top N] report.xml...
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const all = args.includes('--all');
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 15;
const reports = args.filter((arg, i) => !arg.startsWith('--') && (topAt < 0 || i !== topAt + 1));

const rows = [];
const failed = [];
const unescape = (text) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
for (const report of reports) {
  if (!existsSync(report)) {
    console.log(`(no report at ${report}: that pass did not finish)`);
    continue;
  }
  const label = path.basename(report, '.xml');
  const xml = readFileSync(report, 'utf8');
  const files = [];
  for (const match of xml.matchAll(/<testsuite\b([^>]*)>/g)) {
    const attribute = (name) => new RegExp(`\\b${name}="([^"]*)"`).exec(match[1])?.[1];
    files.push({ label, file: attribute('name') ?? '?', seconds: Number(attribute('time') ?? 0), tests: Number(attribute('tests') ?? 0), failures: Number(attribute('failures') ?? 0) });
  }
  for (const match of xml.matchAll(/<testcase\b([^>]*)>([\s\S]*?)<\/testcase>/g)) {
    const failure = /<failure\b[^>]*>([\s\S]*?)<\/failure>/.exec(match[2]);
    if (failure === null) continue;
    const attribute = (name) => unescape(new RegExp(`\\b${name}="([^"]*)"`).exec(match[1])?.[1] ?? '?');
    failed.push({ label, test: `${attribute('classname')} > ${attribute('name')}`, text: unescape(failure[1]).split('\n').slice(0, 25).join('\n') });
  }
  files.sort((a, b) => b.seconds - a.seconds);
  const total = files.reduce((sum, row) => sum + row.seconds, 0);
  if (all) {
    console.log(`== ${label}: ${files.length} files, ${total.toFixed(1)} s of file time (workers run files side by side: the wall-clock time is less)`);
    for (const row of files) console.log(`${row.seconds.toFixed(2).padStart(8)} s  ${row.file} (${row.tests} tests${row.failures ? `, ${row.failures} failed` : ''})`);
  }
  rows.push(...files);
}
rows.sort((a, b) => b.seconds - a.seconds);
const labels = new Set(rows.map((row) => row.label));
console.log(`== the ${Math.min(top, rows.length)} slowest test files${labels.size > 1 ? ` of ${[...labels].join(', ')}` : ''}`);
for (const row of rows.slice(0, top)) console.log(`${row.seconds.toFixed(2).padStart(8)} s  ${row.file}${labels.size > 1 ? `  [${row.label}]` : ''}`);
if (failed.length > 0) {
  console.log(`== ${failed.length} failed test${failed.length === 1 ? '' : 's'}`);
  for (const { label, test, text } of failed) console.log(`-- [${label}] ${test}\n${text}`);
}
