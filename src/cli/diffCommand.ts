import path from 'node:path';
import type { Command } from './command.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { LogProblem } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { diffRuns } from '../machines/runDiff.js';
import { ExitCode } from './exitCodes.js';
import { help, parse, usageError } from './args.js';
import { natsOptionSpecs, natsOptionsHelp, natsUrl } from './natsOptions.js';
import { line, styles, type Output } from './output.js';
import { formatDiff } from './diffTable.js';

const diffUsage = `usage: redflow diff <a.jsonl> <b.jsonl> [--json]
       redflow diff <traceId> <traceId> --nats <url> [--json]

Compares two runs iteration by iteration (iteration n of a with iteration n of b): the model's
decision (final answer, tool call, question, …), the tool called, its input, its result (or a
person's answer) and the model's tokens, then the outcome (status, reason, answer). Ids, times and
durations never count as a difference; durations are shown. Prints one row per iteration with
the first difference marked ▶ and, below each row that differs, both runs' values.
  --json    print the diff as JSON: { same, first, iterations, outcome, runs } (docs/diff.md)
Exit codes: 0 the runs are the same, 1 they differ, 64 usage, 65 a log that cannot be read as a
run (DIFF_LOG_UNREADABLE), 66 a log that does not exist (LOG_NOT_FOUND).

${natsOptionsHelp}`;

/** `redflow diff <a> <b>`: two runs side by side, aligned by iteration; exit 0 when the same, 1 when not. */
export const diff: Command = {
  name: 'diff',
  usage: diffUsage,
  async run(args, output) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, ...natsOptionSpecs }, diffUsage);
    if (values.help) return help(output, diffUsage);
    const [a, b, ...extra] = positionals;
    if (a === undefined || b === undefined) throw usageError('which runs? give two logs (.jsonl files), or two trace ids with --nats', diffUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, diffUsage);
    const [eventsA, eventsB] = await Promise.all([readRun(a, values, output), readRun(b, values, output)]);
    const result = diffRuns(eventsA, eventsB);
    if (values.json) line(output.out, JSON.stringify(result, null, 2));
    else for (const text of formatDiff(result, { a, b }, output.color)) line(output.out, text);
    // Like diff(1): 0 the same, 1 different, anything else trouble.
    return result.same ? ExitCode.Ok : ExitCode.RunFailed;
  },
};

/** A run's events from its log file, or with --nats from JetStream; a log that is not a readable run is an error. */
async function readRun(given: string, values: Record<string, string | boolean | undefined>, output: Output): Promise<readonly AgentEvent[]> {
  const { events, problems } = natsUrl(values)
    ? await (await import('./clusterRun.js')).readClusterLog(values, given)
    : await readJsonlLog(path.resolve(given)).catch((error: unknown) => {
        if (error instanceof RedflowError) throw error;
        throw unreadable(given, `it cannot be read (${(error as Error).message})`, 'give the .jsonl file a run wrote (redflow run prints it as "log:")');
      });
  // A torn last record is what a crash leaves: the run up to it compares as it is.
  const damage = problems.find((problem: LogProblem) => problem.code !== ErrorCode.LOG_RECORD_TORN);
  if (damage !== undefined) {
    throw unreadable(given, `line ${damage.position}: ${damage.code} ${damage.message}`, '`redflow replay <log>` lists the damaged records; compare a log without them');
  }
  if (events.length === 0) throw unreadable(given, 'it holds no events', 'give the log of a run that started (with --nats, the trace id of a run on this cluster)');
  const torn = problems[0];
  if (torn !== undefined) line(output.err, styles(output.color).yellow(`${given}: the last record is torn (line ${torn.position}); compared up to it`));
  return events;
}

function unreadable(given: string, why: string, hint: string): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.DIFF_LOG_UNREADABLE, `${given} is not a run's log that can be read: ${why}`, { hint, path: given }));
}
