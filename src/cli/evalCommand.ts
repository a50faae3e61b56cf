import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from './command.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { ExitCode } from './exitCodes.js';
import { help, parse, positiveInteger, usageError } from './args.js';
import { allowFilesOptionHelp, allowFilesOptionSpec, allowedFolders } from './allowFilesOption.js';
import { line, styles, type Output } from './output.js';
import type { CaseRow, EvalReport, ReportVerdict } from '../evals/report.js';
import { connectFromOptions, natsOptionSpecs, natsUrl, subjectPrefix } from './natsOptions.js';
import { whyLines } from './evalWhy.js';
import { wentWrong } from '../evals/caseFork.js';

const evalUsage = `usage: redflow eval <suite> [--flow <flow.json>] [--seam start|model|all] [--concurrency <n>] [--out <dir>]
                    [--json <report.json>] [--junit <report.xml>] [--html <report.html>]
                    [--min-score <0..1>] [--baseline <report.json>] [--timeout <ms>] [--allow-files <dir> ...]
                    [--nats <url> [--prefix <p>]]
       redflow eval add <log.jsonl> ... [--suite <dir>] [--name <case>] [--exact]

Runs a suite of recorded runs again and scores each against its expectations (docs/eval-suites.md).
A suite is a folder of recorded logs (<case>.jsonl), each with its expectations (<case>.eval.yaml):
the final answer (exact, contains, regex, schema, judge), the tool path (in order, partial credit),
the outcome's status and limits (iterations, tokens, durationMs). A broken case is an error row;
the rest of the suite still runs. Each case prints a line on stderr as it ends, the table on stdout;
then stderr says where each failed case's run first went otherwise, and how to fork the worst there.
  --flow <file>         the changed flow every case runs (default: each case's recorded flow)
  --seam <seam>         where each eval run starts: \`start\` runs the flow live from the beginning
                        with the recorded input; \`model\` forks the recorded run at its last model
                        call (that call live, tool calls answered from the record where they match);
                        \`all\` forks it at iteration 1 (the rest live, recorded tool results where
                        the call matches, live tools where not: the report says which)
  --concurrency <n>     how many cases run at once (default 1)
  --out <dir>           the folder of the eval runs' logs, new or without logs (default
                        .redflow/evals/<suite>-<time>)
  --json <file>         write the report as JSON (also what --baseline reads)
  --junit <file>        write the report as JUnit XML, one testcase per case
  --html <file>         write the report as one self-contained HTML page, one row per case
  --min-score <x>       exit 1 when the suite's score (the mean of the cases', an error counting 0)
                        is below x (0 to 1)
  --baseline <file>     exit 1 when the score is below this earlier JSON report's; the cases that
                        scored lower are listed
  --timeout <ms>        end each eval run as "timeout" after this long
  --nats <url>          run each case on a cluster: its eval run is a fork of the case's log whose
                        log goes to the trace stream and which a core worker runs (\`start\`: a fork
                        at iteration 1); a copy of each log is written to --out, the report is the same
  --prefix <p>          the cluster's subject prefix (default redflow) [REDFLOW_PREFIX]
${allowFilesOptionHelp}

\`eval add\` turns run logs into cases: it copies each log into the suite (default ./evals) and
writes its <case>.eval.yaml prefilled from the run: its final answer (contains, or --exact), its
tool path and its status. --name names the case (one log only; default the log's file name).
Exit codes: 0 the score is at or above the threshold and the baseline, 1 below, 64 usage,
65 an invalid flow or baseline (or an --out folder holding earlier eval runs), 66 no such suite or log.`;

function scoreFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw usageError(`--min-score must be a number from 0 to 1, not "${value}"`, evalUsage);
  return n;
}

async function readBaseline(file: string): Promise<EvalReport> {
  const refuse = (why: string) =>
    new RedflowError(errorInfo(ErrorCode.EVAL_BASELINE_INVALID, `the baseline ${file} ${why}`, { hint: 'give --baseline a report written by `redflow eval --json <file>`' }));
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw refuse(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch {
    throw refuse('is not JSON');
  }
  const { score, cases } = (report ?? {}) as { score?: unknown; cases?: unknown };
  if (typeof score !== 'number' || !Array.isArray(cases)) throw refuse('is not an eval report (it has no score and cases)');
  return report as EvalReport;
}

async function writeOut(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, text);
}

/** US dollars with four significant digits, after the tokens where the run had a price. */
function cost(usd: number | undefined): string {
  return usd === undefined ? '' : ` $${Number(usd.toPrecision(4))}`;
}

function tokensOf(row: CaseRow): string {
  if (row.eval === undefined) return '-';
  return `${row.eval.tokens}${cost(row.eval.costUsd)} (recorded ${row.recorded?.tokens ?? 0}${cost(row.recorded?.costUsd)})`;
}

function progressLine(row: CaseRow, done: number, total: number, color: boolean): string {
  const s = styles(color);
  const width = String(total).length;
  const result = row.result === 'pass' ? s.green('pass ') : row.result === 'fail' ? s.red('fail ') : s.yellow('error');
  const why = row.error ? `${row.error.code}: ${row.error.message}` : row.checks.filter((check) => !check.pass).map((check) => check.name).join(', ');
  return `[${String(done).padStart(width)}/${total}] ${result} ${row.score.toFixed(3)}  ${row.name}  tokens ${tokensOf(row)}${why ? `  ${s.dim(why)}` : ''}`;
}

function printTable(report: EvalReport, verdict: ReportVerdict, why: readonly string[], output: Output): void {
  const s = styles(output.color);
  const header = ['case', 'result', 'score', 'tools', 'status', 'tokens'];
  const rows = report.cases.map((row) => {
    const tools = row.checks.find((check) => check.name === 'tools');
    return [
      row.name,
      row.result,
      row.score.toFixed(3),
      tools ? tools.score.toFixed(2) : '-',
      row.eval ? `${row.recorded?.status ?? '?'} → ${row.eval.status}` : (row.error?.code ?? '-'),
      tokensOf(row),
    ];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((cells) => (cells[i] as string).length)));
  const format = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ').trimEnd();
  line(output.out, s.bold(format(header)));
  for (const cells of rows) line(output.out, format(cells));
  const { total, passed, failed, errors } = report.counts;
  line(output.out);
  line(output.out, `score ${report.score.toFixed(3)}  ${total} cases: ${passed} passed, ${failed} failed, ${errors} error${errors === 1 ? '' : 's'}`);
  line(output.out, `tokens ${report.tokens.eval}${cost(report.cost?.eval)} (recorded ${report.tokens.recorded}${cost(report.cost?.recorded)}${report.tokens.judge > 0 ? `, judges ${report.tokens.judge}` : ''})  logs: ${path.relative(process.cwd(), report.outDir) || '.'}`);
  for (const regression of verdict.regressions) line(output.out, s.yellow(`regressed: ${regression.name} ${regression.baseline.toFixed(3)} → ${regression.score.toFixed(3)}`));
  for (const text of why) line(output.err, text);
  for (const reason of verdict.reasons) line(output.err, s.red(`failed: ${reason}`));
}

async function addCases(args: readonly string[], output: Output): Promise<ExitCode> {
  const { values, positionals } = parse(args, { suite: { type: 'string' }, name: { type: 'string' }, exact: { type: 'boolean' } }, evalUsage);
  if (values.help) return help(output, evalUsage);
  if (positionals.length === 0) throw usageError('which run? give the .jsonl log of a run to turn into a case', evalUsage);
  if (values.name !== undefined && positionals.length > 1) throw usageError('--name names one case: give one log with it', evalUsage);
  const { addEvalCase } = await import('../evals/addCase.js');
  for (const log of positionals) {
    const added = await addEvalCase({
      log,
      suite: (values.suite as string | undefined) ?? 'evals',
      answer: values.exact ? 'exact' : 'contains',
      ...(values.name !== undefined && { name: values.name as string }),
    });
    line(output.out, `added case ${added.name}: ${path.relative(process.cwd(), added.expectationsFile)}`);
  }
  return ExitCode.Ok;
}

/** The cluster `--nats` names, and how an eval run is made there: a fork on it. */
async function connectCluster(values: Record<string, string | boolean | undefined>) {
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-eval');
  const [{ clusterEvalFork }, { requireJetStream }, { stopWithin }] = await Promise.all([import('./clusterEvalFork.js'), import('../nats/jetStreamNotEnabled.js'), import('./stopWithin.js')]);
  const close = () => stopWithin([], nc);
  await requireJetStream(nc).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  return { fork: clusterEvalFork(nc, prefix), close };
}

/** `redflow eval`: runs a suite of recorded runs against a (changed) flow; `redflow eval add` makes cases. */
export const evalCommand: Command = {
  name: 'eval',
  usage: evalUsage,
  async run(args, output) {
    if (args[0] === 'add') return addCases(args.slice(1), output);
    const { values, positionals } = parse(
      args,
      {
        flow: { type: 'string' },
        seam: { type: 'string' },
        concurrency: { type: 'string' },
        out: { type: 'string' },
        json: { type: 'string' },
        junit: { type: 'string' },
        html: { type: 'string' },
        'min-score': { type: 'string' },
        baseline: { type: 'string' },
        timeout: { type: 'string' },
        ...allowFilesOptionSpec,
        ...natsOptionSpecs,
      },
      evalUsage,
    );
    if (values.help) return help(output, evalUsage);
    const [suite, ...extra] = positionals;
    if (suite === undefined) throw usageError('which suite? give the folder of its cases', evalUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, evalUsage);
    const concurrency = values.concurrency === undefined ? 1 : Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency <= 0) throw usageError(`--concurrency must be a positive whole number, not "${String(values.concurrency)}"`, evalUsage);
    const minScore = scoreFlag(values['min-score'] as string | undefined);
    const timeoutMs = positiveInteger(values.timeout as string | undefined, '--timeout', evalUsage);
    const baseline = values.baseline === undefined ? undefined : await readBaseline(values.baseline as string);
    const { runEvalSuite } = await import('../evals/runSuite.js');
    const { judgeReport } = await import('../evals/report.js');
    const cluster = natsUrl(values) ? await connectCluster(values) : undefined;
    const report = await runEvalSuite({
      suite,
      seam: ((values.seam as string | undefined) ?? 'start') as EvalReport['seam'],
      concurrency,
      allowFiles: allowedFolders(values),
      ...(values.flow !== undefined && { flowPath: values.flow as string }),
      ...(values.out !== undefined && { outDir: values.out as string }),
      ...(timeoutMs !== undefined && { caseTimeoutMs: timeoutMs }),
      ...(cluster !== undefined && { fork: cluster.fork }),
      onCase: (row, done, total) => line(output.err, progressLine(row, done, total, output.color)),
    }).finally(() => cluster?.close());
    const verdict = judgeReport(report, { ...(minScore !== undefined && { minScore }), ...(baseline !== undefined && { baseline }) });
    // Each case's eval run diffed against its recorded run: where it went wrong, for the reports and the why lines.
    const diffs = await (await import('../evals/caseDiffs.js')).readCaseDiffs(report);
    if (values.json !== undefined) {
      const cases = report.cases.map((row) => {
        const diff = diffs.get(row.name);
        return diff === undefined ? row : { ...row, firstDifference: wentWrong(diff) };
      });
      await writeOut(values.json as string, `${JSON.stringify({ ...report, cases, verdict }, null, 2)}\n`);
    }
    if (values.junit !== undefined) await writeOut(values.junit as string, (await import('../evals/junit.js')).junitXml(report));
    if (values.html !== undefined) {
      const { reportHtml } = await import('../evals/html.js');
      await writeOut(values.html as string, reportHtml(report, path.dirname(values.html as string), diffs));
    }
    printTable(report, verdict, whyLines(report, diffs), output);
    return verdict.ok ? ExitCode.Ok : ExitCode.RunFailed;
  },
};
