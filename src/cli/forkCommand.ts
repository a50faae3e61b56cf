import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from './command.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { forkRun } from '../host/forkRun.js';
import { readAnswersFile } from '../runtime/flowActors.js';
import { crashHook, help, parse, positiveInteger, usageError } from './args.js';
import { allowFilesOptionHelp, allowedFolders } from './allowFilesOption.js';
import { runOptionSpecs } from './runOptions.js';
import { line, styles } from './output.js';
import { createProgressPrinter } from './progress.js';
import { natsOptionSpecs, natsUrl } from './natsOptions.js';
import { report } from './runReport.js';

const forkUsage = `usage: redflow fork <log.jsonl|traceId> --at <n> [--flow <flow.json>] [--model <json>] [--prompt <file>]
                    [--tool-result <n>=<json> ...] [--answer <n>=<json> ...] [--script <answers.json>]
                    [--log <fork.jsonl>] [--json] [--timeout <ms>] [--allow-files <dir> ...]
                    [--nats <url> [--prefix <p>]]

Starts a new run from another run's log (docs/forks.md): the parent's events up to the start of
iteration <n> are the fork's own (checked under the fork's flow), then the fork goes on live from
there. The parent's log is only read. A trace id is looked up in .redflow/runs.
  --at <n>               the iteration the fork runs live from (1: from the first model call)
  --flow <file>          the flow to go on with (default the parent's)
  --model <json>         model node settings merged over the flow's, e.g. '{"model":"gpt-4o-mini"}'
  --prompt <file>        the agent's instructions (its system prompt) from this text file
  --tool-result <n>=<json>  iteration n's tool call gives this output instead of running the tool
  --answer <n>=<json>    iteration n's model answer is this (an answer-format JSON value)
  --script <file>        scripted model answers (one per iteration) instead of the flow's model
  --log <file>           the fork's log (default .redflow/runs/<traceId>.jsonl)
  --nats <url>           fork on a cluster: the parent is a trace id in the trace stream (or a log
                         file), the fork's log goes to the stream and a core worker runs it, a
                         cluster run like any other (--model and --script are the model workers')
  --prefix <p>           the cluster's subject prefix (default redflow) [REDFLOW_PREFIX]
${allowFilesOptionHelp}
A parent that has not ended while a live process writes its log is refused (FORK_RUN_STILL_RUNNING);
a crashed run, or one parked on a wait, can be forked. A fork killed mid-run goes on with
\`redflow resume <fork.jsonl>\`, like any run.`;

/** `<n>=<json>` pairs of a repeated flag, by iteration. */
function byIteration(values: readonly string[] | undefined, flag: string): Record<number, unknown> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const pairs: Record<number, unknown> = {};
  for (const value of values) {
    const split = value.indexOf('=');
    const iteration = Number(value.slice(0, split));
    if (split < 1 || !Number.isInteger(iteration) || iteration < 1) throw usageError(`${flag} takes <iteration>=<json>, not "${value}"`, forkUsage);
    pairs[iteration] = jsonOf(value.slice(split + 1), flag);
  }
  return pairs;
}

function jsonOf(text: string, flag: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw usageError(`${flag}: ${(error as Error).message}`, forkUsage);
  }
}

function atOf(value: string | undefined): number {
  if (value === undefined) throw usageError('where? give the iteration to fork at with --at <n>', forkUsage);
  const at = Number(value);
  if (value.trim() === '' || !Number.isInteger(at) || at < 1) {
    throw new RedflowError(errorInfo(ErrorCode.FORK_POINT_OUT_OF_RANGE, `--at must be an iteration from 1, not "${value}"`, { hint: 'give --at an iteration the run started (`redflow replay <log>` lists them)' }));
  }
  return at;
}

export const fork: Command = {
  name: 'fork',
  usage: forkUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      {
        at: { type: 'string' },
        flow: { type: 'string' },
        model: { type: 'string' },
        prompt: { type: 'string' },
        'tool-result': { type: 'string', multiple: true },
        answer: { type: 'string', multiple: true },
        ...runOptionSpecs,
        ...natsOptionSpecs,
      },
      forkUsage,
    );
    if (values.help) return help(output, forkUsage);
    const [from, ...extra] = positionals;
    if (!from) throw usageError('which run? give its .jsonl log or its trace id', forkUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, forkUsage);
    const at = atOf(values.at as string | undefined);
    const model = values.model === undefined ? undefined : jsonOf(values.model as string, '--model');
    if (model !== undefined && (typeof model !== 'object' || model === null || Array.isArray(model))) throw usageError('--model takes a JSON object of model node settings', forkUsage);
    const prompt = values.prompt === undefined ? undefined : await readFile(path.resolve(values.prompt as string), 'utf8');
    const script = values.script === undefined ? undefined : await readAnswersFile(path.resolve(values.script as string));
    const toolResults = byIteration(values['tool-result'] as unknown as string[] | undefined, '--tool-result');
    const answers = byIteration(values.answer as unknown as string[] | undefined, '--answer');
    const timeoutMs = positiveInteger(values.timeout as string | undefined, '--timeout', forkUsage);
    const json = Boolean(values.json);
    const progress = createProgressPrinter(output);
    // What the fork is and changes, the same wherever it runs.
    const changes = {
      from,
      at,
      allowFiles: allowedFolders(values),
      ...(values.flow !== undefined && { flow: values.flow as string }),
      ...(model !== undefined && { model: model as Record<string, unknown> }),
      ...(prompt !== undefined && { prompt }),
      ...(script !== undefined && { script }),
      ...(toolResults !== undefined && { toolResults }),
      ...(answers !== undefined && { answers }),
    };
    if (natsUrl(values)) {
      if (values.log !== undefined) throw usageError('with --nats the fork\'s log goes to the trace stream: leave out --log', forkUsage);
      const { forkOnClusterCommand } = await import('./clusterFork.js');
      return forkOnClusterCommand({ ...changes, values, json, output, progress, ...(timeoutMs !== undefined && { timeoutMs }) });
    }
    const crash = crashHook();
    const forked = await forkRun({
      ...changes,
      ...(values.log !== undefined && { logPath: values.log as string }),
      ...(timeoutMs !== undefined && { timeoutMs }),
      onEvent: (event) => {
        if (!json) progress.onEvent(event);
        crash?.(event);
      },
      onChunk: (chunk) => {
        if (!json) progress.onChunk(chunk);
      },
    });
    if (!json) line(output.err, styles(output.color).dim(`fork ${forked.traceId} of ${forked.parentLog} at iteration ${at}: ${forked.logPath}`));
    return report(forked, json, output, progress);
  },
};
