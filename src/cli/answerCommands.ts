import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AnswerTarget, CallAnswer, GivenAnswer } from '../events/pendingWait.js';
import { DEFAULT_RUNS_DIR, resumeFromLog } from '../host/embeddedFlowRun.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { isValidTraceId } from '../runtime/ids.js';
import { readAnswersFile } from '../runtime/flowActors.js';
import { crashHook, help, parse, positiveInteger, usageError } from './args.js';
import { allowFilesOptionHelp, allowFilesOptionSpec, allowedFolders } from './allowFilesOption.js';
import { postAnswer } from './answerOverHttp.js';
import { loggedDefinitionModule, resumeDefinitionLog } from './definitionRun.js';
import type { Command } from './command.js';
import { report } from './runReport.js';
import { ExitCode } from './exitCodes.js';
import { line, styles, type Output } from './output.js';
import { createProgressPrinter } from './progress.js';
import { natsOptionSpecs, natsOptionsHelp, natsUrl } from './natsOptions.js';

type Values = Record<string, string | boolean | undefined>;

/** The options every answering command takes besides its own. */
const commonSpecs = {
  key: { type: 'string' },
  iteration: { type: 'string' },
  server: { type: 'string' },
  token: { type: 'string' },
  flow: { type: 'string' },
  script: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  ...allowFilesOptionSpec,
  ...natsOptionSpecs,
} as const;

const commonHelp = `Where the run is:
  <log.jsonl>           a run's log: the run is answered and goes on in this process, as \`redflow resume\`
                        would continue it, until it ends or waits again (--flow, --script, --timeout,
                        --allow-files as for resume: the flow and the script of \`run --script\` are
                        the log's unless given); a trace id alone looks in ${DEFAULT_RUNS_DIR}
  --server <url>        a \`redflow serve\`: the answer is posted to its HTTP API, and the run goes on there
                        (--token <token> or REDFLOW_TOKEN when it has one)
  --nats <url>          a cluster: one core worker takes the answer and resumes the run
Which call (optional: refused with WAIT_ANSWER_MISMATCH unless the run waits on it):
  --key <idempotencyKey>   the call's key (<traceId>:<iteration>)
  --iteration <n>          the call's iteration
  --json                print the run (server, cluster) or its outcome (log) as JSON
Exit codes: as redflow run for a run answered here (0 done, 1 blocked, 2 escalated, 3 waits again, 4 delegated);
0 when the server or cluster took the answer; 65 when the run waits for no such answer
(RUN_NOT_WAITING, WAIT_ALREADY_ANSWERED, WAIT_ANSWER_MISMATCH, RUN_ALREADY_FINISHED), or when it
came past the wait's deadline (WAIT_EXPIRED: the run has taken the expiry and ended blocked);
66 no such run; 69 no server or core worker answers.

${allowFilesOptionHelp}

${natsOptionsHelp}`;

const approveUsage = `usage: redflow approve <log.jsonl | traceId> [--reason <text>] [--server <url> | --nats <url>] [--key <key>]

Approves the tool call a run waits on (a tool in the agent's requiresApproval): the call is made,
and the run goes on.
  --reason <text>       why (recorded with the approval)

${commonHelp}`;

const denyUsage = `usage: redflow deny <log.jsonl | traceId> [--reason <text>] [--server <url> | --nats <url>] [--key <key>]

Denies the tool call a run waits on: it is never made, and the model sees the denial (TOOL_DENIED,
with the reason) as its next observation.
  --reason <text>       why: the model reads it

${commonHelp}`;

const toolResultUsage = `usage: redflow tool-result <log.jsonl | traceId> (--output <json> | --output-file <file> | --error <message>)
                          [--server <url> | --nats <url>] [--key <key>]

Gives the result of a tool the run's client executes (a tool.client node, or executor "client")
to the run that waits for it; the model sees it as its next observation.
  --output <json>       the tool's output: parsed as JSON when it is JSON, taken as text otherwise
  --output-file <file>  the same, read from a file
  --error <message>     the tool failed: the model sees TOOL_FAILED with this message

${commonHelp}`;

const answerUsage = `usage: redflow answer <log.jsonl | traceId> (--text <answer> | --text-file <file>) [--server <url> | --nats <url>] [--key <key>]

Answers the question a run waits on (the model's escalate or request_info): the model sees the
answer as its next observation, and the run goes on.
  --text <answer>       the answer, as the model will read it
  --text-file <file>    the same, read from a file

${commonHelp}`;

/** The call an answer names, from `--key` and `--iteration`. */
function target(values: Values, usage: string): AnswerTarget {
  const iteration = positiveInteger(values.iteration as string | undefined, '--iteration', usage);
  return {
    ...(values.key !== undefined && { idempotencyKey: values.key as string }),
    ...(iteration !== undefined && { iteration }),
  };
}

/** A run's log given by path, or by trace id in the default runs folder. */
function logPathOf(given: string): string {
  if (existsSync(given) || given.endsWith('.jsonl') || !isValidTraceId(given)) return given;
  return path.join(DEFAULT_RUNS_DIR, `${given}.jsonl`);
}

/** Sends the answer where the run is: a server, a cluster, or its log here. */
async function answerRun(given: string, answer: GivenAnswer, values: Values, usage: string, output: Output): Promise<ExitCode> {
  const json = Boolean(values.json);
  const server = values.server as string | undefined;
  const nats = natsUrl(values);
  if (server !== undefined && nats !== undefined) throw usageError('give --server or --nats, not both', usage);
  if (nats !== undefined) {
    for (const flag of ['flow', 'script', 'timeout', 'allow-files', 'token'] as const) {
      if (values[flag] !== undefined) throw usageError(`--${flag} is not for a run on a cluster`, usage);
    }
    if (!isValidTraceId(given)) throw usageError(`with --nats, give the run's trace id, not "${given}"`, usage);
    const { answerOnCluster } = await import('./clusterAnswer.js');
    const taken = await answerOnCluster(values, given, answer);
    if (json) line(output.out, JSON.stringify({ traceId: given, ...taken }, null, 2));
    else line(output.err, styles(output.color).green(`run ${given}: answer taken by core worker ${taken.owner}; the run goes on there`));
    return ExitCode.Ok;
  }
  if (server !== undefined) {
    for (const flag of ['flow', 'script', 'timeout', 'allow-files'] as const) {
      if (values[flag] !== undefined) throw usageError(`--${flag} is for a run answered here, from its log`, usage);
    }
    if (!isValidTraceId(given)) throw usageError(`"${given}" is not a trace id`, usage);
    const run = await postAnswer(server, given, answer, (values.token as string | undefined) ?? process.env.REDFLOW_TOKEN);
    if (json) line(output.out, JSON.stringify(run, null, 2));
    else line(output.err, styles(output.color).green(`run ${given}: answer taken; the run goes on (${run.status})`));
    return ExitCode.Ok;
  }
  if (values.token !== undefined) throw usageError('--token goes with --server', usage);
  const script = values.script !== undefined ? await readAnswersFile(path.resolve(values.script as string)) : undefined;
  const timeoutMs = positiveInteger(values.timeout as string | undefined, '--timeout', usage);
  const progress = createProgressPrinter(output);
  const crash = crashHook();
  const logPath = logPathOf(given);
  // A run of an agent definition goes on with its module's model and tools, as `redflow resume` does.
  const logged = existsSync(logPath) ? await loggedDefinitionModule(logPath, values.flow as string | undefined) : undefined;
  if (logged !== undefined) {
    for (const flag of ['timeout', 'allow-files'] as const) {
      if (values[flag] !== undefined) throw usageError(`--${flag} is for flow files; an agent definition sets its own (runConfig)`, usage);
    }
    return resumeDefinitionLog({ file: logged.file, logPath, events: logged.events, answer, json, output, progress, ...(script && { script }), ...(crash && { onEvent: crash }) });
  }
  // What the log holds already, so the iteration the answer completes prints whole.
  if (!json) progress.resumeFrom((await readJsonlLog(logPath).catch(() => ({ events: [] }))).events);
  // A late answer is refused (WAIT_EXPIRED) once the run has ended blocked: what it printed meanwhile is done.
  const embedded = await resumeFromLog({
    logPath,
    answer,
    allowFiles: allowedFolders(values),
    ...(values.flow !== undefined && { flowPath: values.flow as string }),
    ...(script && { script }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    onEvent: (event) => {
      if (!json) progress.onEvent(event);
      crash?.(event);
    },
  }).catch((error: unknown) => {
    progress.done();
    throw error;
  });
  return report(embedded, json, output, progress);
}

/** The run's log or trace id, the one positional argument. */
function runOf(positionals: readonly string[], usage: string): string {
  const [given, ...extra] = positionals;
  if (!given) throw usageError('which run? give its log file (or its trace id)', usage);
  if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, usage);
  return given;
}

function decision(name: 'approve' | 'deny', usage: string): Command {
  return {
    name,
    usage,
    async run(args, output) {
      const { values, positionals } = parse(args, { ...commonSpecs, reason: { type: 'string' } }, usage);
      if (values.help) return help(output, usage);
      const given = runOf(positionals, usage);
      const reason = values.reason as string | undefined;
      if (reason !== undefined && reason.trim() === '') throw usageError('--reason must say something', usage);
      const answer: CallAnswer = { kind: 'approval', approved: name === 'approve', ...target(values, usage), ...(reason !== undefined && { reason }) };
      return answerRun(given, answer, values, usage, output);
    },
  };
}

/** `redflow approve`: approves the call a run waits on. */
export const approve: Command = decision('approve', approveUsage);

/** `redflow deny`: denies the call a run waits on; the model sees the denial. */
export const deny: Command = decision('deny', denyUsage);

/** `redflow tool-result`: the result of a tool the run's client executes. */
export const toolResult: Command = {
  name: 'tool-result',
  usage: toolResultUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      { ...commonSpecs, output: { type: 'string' }, 'output-file': { type: 'string' }, error: { type: 'string' } },
      toolResultUsage,
    );
    if (values.help) return help(output, toolResultUsage);
    const given = runOf(positionals, toolResultUsage);
    const sources = (['output', 'output-file', 'error'] as const).filter((flag) => values[flag] !== undefined);
    if (sources.length !== 1) throw usageError('give exactly one of --output, --output-file and --error', toolResultUsage);
    let result: Extract<CallAnswer, { kind: 'client' }>['result'];
    if (values.error !== undefined) {
      const message = values.error as string;
      if (message.trim() === '') throw usageError('--error must say what went wrong', toolResultUsage);
      result = { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, message) };
    } else {
      const text = values.output !== undefined ? (values.output as string) : await readOutputFile(values['output-file'] as string);
      result = { ok: true, output: parseOutput(text) };
    }
    return answerRun(given, { kind: 'client', result, ...target(values, toolResultUsage) }, values, toolResultUsage, output);
  },
};

/** `redflow answer`: a person's answer to the question a run waits on (escalate, request_info). */
export const answer: Command = {
  name: 'answer',
  usage: answerUsage,
  async run(args, output) {
    const { values, positionals } = parse(args, { ...commonSpecs, text: { type: 'string' }, 'text-file': { type: 'string' } }, answerUsage);
    if (values.help) return help(output, answerUsage);
    const given = runOf(positionals, answerUsage);
    if ((values.text === undefined) === (values['text-file'] === undefined)) throw usageError('give exactly one of --text and --text-file', answerUsage);
    const text = values.text !== undefined ? (values.text as string) : await readOutputFile(values['text-file'] as string);
    if (text.trim() === '') throw usageError('the answer must say something', answerUsage);
    return answerRun(given, { kind: 'human', text, ...target(values, answerUsage) }, values, answerUsage, output);
  },
};

/** A tool's output as typed: JSON when it parses, the text itself otherwise. */
function parseOutput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function readOutputFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.INPUT_FILE_NOT_FOUND, `cannot read the output file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
        hint: 'give --output-file a readable file, or the output itself with --output',
      }),
    );
  }
}
