import type { Command } from './command.js';
import { readFile } from 'node:fs/promises';
import { parseRunInput } from '../flows/runInput.js';
import { isValidTraceId } from '../runtime/ids.js';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { fold } from '../events/evolve.js';
import { logStatus } from '../events/resumePoint.js';
import { formatDiagnostics } from '../flows/formatDiagnostics.js';
import { loadFlowFile } from '../flows/loadFlow.js';
import { flowFileRoots } from '../files/fileRoots.js';
import { validateFlowTree } from '../flows/agentRefs.js';
import { readAnswersFile } from '../runtime/flowActors.js';
import { environmentWarnings } from '../flows/environmentWarnings.js';
import { checkMcpServers } from '../runtime/mcpServerCheck.js';
import { checkA2aAgents } from '../runtime/a2aAgentCheck.js';
import { resumeFromLog, runFlowFile } from '../host/embeddedFlowRun.js';
import { ExitCode } from './exitCodes.js';
import { crashHook, help, parse, positiveInteger, usageError } from './args.js';
import { natsOptionSpecs, natsOptionsHelp, natsUrl } from './natsOptions.js';
import { line, styles } from './output.js';
import { createProgressPrinter } from './progress.js';
import { formatOutcome } from './timeline.js';
import { formatReplayTimeline } from './replayTimeline.js';
import { report } from './runReport.js';
import { printSteps } from './replaySteps.js';
import { pendingWait, type RunWait } from '../events/pendingWait.js';
import { waitingMessage } from '../runtime/runWaitingError.js';
import { STEP_TEXT_LIMIT } from './formatSteps.js';
import { inspectOptionSpecs, inspectOptionsHelp, openRunInspector } from './inspectCommand.js';
import { checkRunInput } from '../runtime/dataLimits.js';
import { allowFilesOptionHelp, allowFilesOptionSpec, allowedFolders } from './allowFilesOption.js';
import { runOptionSpecs } from './runOptions.js';
import { isDefinitionModulePath } from '../agents/definitionModule.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { loggedDefinitionModule, resumeDefinitionLog, runDefinitionFile, validateDefinitionFile } from './definitionRun.js';


/** `--input` text: JSON when it is a JSON object or array, otherwise the text itself. */
export const parseInput = parseRunInput;

const runUsage = `usage: redflow run <flow.json | agent.ts | agent.js> [--input <text|json>] [--input-file <file>] [--log <file.jsonl>] [--json]
                   [--script <answers.json>] [--conversation <id>] [--timeout <ms>] [--trace-id <id>] [--nats <url>]
                   [--allow-files <dir> ...] [--inspect [--inspect-port <n> | --inspect-url <ws-url>] [--no-open]]

Runs a flow in this process (embedded mode), or with --nats on a cluster of workers
(distributed mode: \`redflow worker\`), and prints each iteration as it finishes. A .ts or .js
module exporting an AgentDefinition (default export) runs in this process, its inputs given as a
JSON object with --input; \`redflow resume <log>\` continues its run.
  --input <text>        the run's input; JSON when it is a JSON object or array, else text
  --input-file <file>   read the input from a file (JSON if it parses, else text)
  --log <file>          where to write the event log (default .redflow/runs/<traceId>.jsonl)
  --json                print the outcome and the final envelope as JSON on stdout
  --script <file>       use these scripted answers (a JSON array) instead of the flow's model;
                        the log records the file, and a resume or an answer goes on with it
  --conversation <id>   load and save this conversation's memory (needs a memory.kv node)
  --timeout <ms>        end the run as "timeout" after this long
  --trace-id <id>       the run's trace id (default: a new random one)
${allowFilesOptionHelp}
  --inspect             show the run's statechart live in the Stately inspector (with --nats, where
                        it runs in a worker: its events, replayed as they arrive); with redflow's
                        relay (the default) the command exits once the page has the run, or at most
                        15 s after the run ends (no page, or the hosted inspector cannot load)
Exit codes: 0 done (or done_partial), 1 blocked (error), 2 escalated, 3 waiting (for an approval, a client tool's
result or a person's answer: redflow approve|deny|tool-result|answer goes on), 4 delegated, 64 usage, 65 invalid flow or input (a file it names
outside the allowed folders, an input nested deeper than 64 levels or over 1,000,000 characters), 66 missing file,
69 the inspector (or NATS) cannot be reached, or the relay's port is taken.

${inspectOptionsHelp}

${natsOptionsHelp}`;

export const run: Command = {
  name: 'run',
  usage: runUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      {
        input: { type: 'string' },
        'input-file': { type: 'string' },
        conversation: { type: 'string' },
        'trace-id': { type: 'string' },
        inspect: { type: 'boolean' },
        ...runOptionSpecs,
        ...inspectOptionSpecs,
        ...natsOptionSpecs,
      },
      runUsage,
    );
    if (values.help) return help(output, runUsage);
    const [flowPath, ...extra] = positionals;
    if (!flowPath) throw usageError('which flow? give the flow file to run', runUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, runUsage);
    if (values.input !== undefined && values['input-file'] !== undefined) throw usageError('give --input or --input-file, not both', runUsage);
    const traceId = values['trace-id'] as string | undefined;
    if (traceId !== undefined && !isValidTraceId(traceId)) {
      throw usageError(`--trace-id must be 1–128 letters, digits, _ or -, not "${traceId}"`, runUsage);
    }
    const input =
      values['input-file'] !== undefined
        ? parseInput(await readInputFile(values['input-file'] as string))
        : parseInput((values.input as string | undefined) ?? '');
    // An embedded flow's run is admitted by runFlowFile, once. A cluster's core worker admits its
    // runs, and an agent definition's inputs are checked against its schema first: for those the
    // input is refused here, before any inspector, connection or schema walks it.
    if (isDefinitionModulePath(flowPath) || natsUrl(values)) checkRunInput(input);
    const json = Boolean(values.json);
    const progress = createProgressPrinter(output);
    if (isDefinitionModulePath(flowPath)) {
      for (const flag of ['conversation', 'timeout', 'inspect', 'nats', 'allow-files'] as const) {
        if (values[flag] !== undefined) throw usageError(`--${flag} is for flow files; an agent definition sets its own (runConfig) and runs in this process`, runUsage);
      }
      const script = values.script !== undefined ? await readAnswersFile(path.resolve(values.script as string)) : undefined;
      const crash = crashHook();
      return runDefinitionFile({
        file: flowPath,
        input,
        usage: runUsage,
        json,
        output,
        progress,
        ...(script && { script, scriptFile: path.resolve(values.script as string) }),
        ...(values.log !== undefined && { logPath: values.log as string }),
        ...(traceId !== undefined && { traceId }),
        ...(crash && { onEvent: crash }),
      });
    }
    if (natsUrl(values)) {
      for (const flag of ['log', 'script', 'timeout'] as const) {
        if (values[flag] !== undefined) throw usageError(`--${flag} is for embedded runs; on a cluster the workers decide it`, runUsage);
      }
      const { runOnCluster } = await import('./clusterRun.js');
      const inspector = await openRunInspector(values, runUsage, output, { json });
      try {
        const code = await runOnCluster({ flowPath, input, values, json, output, progress: inspector?.following(progress) ?? progress, ...(traceId !== undefined && { traceId }) });
        await inspector?.finish();
        return code;
      } finally {
        await inspector?.close();
      }
    }
    const script = values.script !== undefined ? await readAnswersFile(path.resolve(values.script as string)) : undefined;
    const timeoutMs = positiveInteger(values.timeout as string | undefined, '--timeout', runUsage);
    const crash = crashHook();
    const subagentCrash = optionalCrash(crashHook('subagents'));
    const inspector = await openRunInspector(values, runUsage, output, { json });
    try {
      const inspected = inspector?.embedded(traceId);
      const runTraceId = inspected?.traceId ?? traceId;
      const embedded = await runFlowFile({
        flowPath,
        input,
        allowFiles: allowedFolders(values),
        ...(values.log !== undefined && { logPath: values.log as string }),
        ...(runTraceId !== undefined && { traceId: runTraceId }),
        ...(values.conversation !== undefined && { conversationId: values.conversation as string }),
        // The file is recorded in the log, so approve/answer/resume go on with the same script.
        ...(script && { script, scriptFile: path.resolve(values.script as string) }),
        ...(timeoutMs !== undefined && { timeoutMs }),
        ...(inspected && { inspect: inspected.inspect }),
        onEvent: (event) => {
          if (!json) progress.onEvent(event);
          crash?.(event);
        },
        onChunk: (chunk) => {
          if (!json) progress.onChunk(chunk);
        },
        ...subagentCrash,
      });
      if (!json) for (const warning of embedded.warnings) line(output.err, styles(output.color).yellow(`warning ${warning.code}: ${warning.message}`));
      const code = await report(embedded, json, output, progress);
      await inspector?.finish();
      return code;
    } finally {
      await inspector?.close();
    }
  },
};

/** The test-only fault hook for subagent runs, as `onSubagentEvent` when it is set. */
function optionalCrash(hook: ((event: AgentEvent) => void) | undefined): { onSubagentEvent?: (event: AgentEvent) => void } {
  return hook === undefined ? {} : { onSubagentEvent: hook };
}

async function readInputFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    throw new RedflowError(
      errorInfo(ErrorCode.INPUT_FILE_NOT_FOUND, `cannot read the input file ${file}: ${errno === 'ENOENT' ? 'there is no such file' : (errno ?? String(error))}`, {
        hint: 'give --input-file the path of a readable file (relative to the working directory), or the input itself with --input',
      }),
    );
  }
}

const validateUsage = `usage: redflow validate <flow.json | agent.ts | x.agent.md> [--json] [--allow-files <dir> ...]

Checks a flow: its JSON, its schema, node configs, edge rules and graph rules, and that the files
it names are inside its folder (or an --allow-files one). Warns (ENV_NOT_SET) when a run started
here would miss an environment variable: the model's API key, a tool.postgres connection string.
Starts (or reaches) each tool.mcp server, lists the tools it brings, and stops it again.
Reads the agent card of each agent.a2a remote agent.
Prints every error and warning with its code. Exit code 0 when valid (warnings allowed), 65 when not.
${allowFilesOptionHelp}`;

async function validateFlowPath(flowPath: string, values: Record<string, unknown>) {
  const loaded = await loadFlowFile(flowPath);
  // A flow that validates is checked for the files it names too, as a run would check it.
  const checked = loaded.validation.ok
    ? await validateFlowTree(loaded.validation, loaded.validation.flow.definition, flowFileRoots(loaded.path, allowedFolders(values)), loaded.path)
    : loaded.validation;
  // And for what a run started here would find missing in this environment (warnings only).
  const warned = checked.ok ? { ...checked, warnings: [...checked.warnings, ...environmentWarnings(checked.flow, process.env)] } : checked;
  // And for its MCP servers: each must start and bring tools a run can offer.
  const mcp = warned.ok ? await checkMcpServers(warned.flow, path.dirname(loaded.path)) : { tools: {}, errors: [] };
  // And for its remote A2A agents: each card must be readable.
  const a2a = warned.ok ? await checkA2aAgents(warned.flow) : [];
  const unreachable = [...mcp.errors, ...a2a];
  const validation = unreachable.length > 0 ? { ok: false as const, errors: unreachable, warnings: warned.warnings } : warned;
  return { validation, mcp };
}

export const validate: Command = {
  name: 'validate',
  usage: validateUsage,
  async run(args, output) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, ...allowFilesOptionSpec }, validateUsage);
    if (values.help) return help(output, validateUsage);
    const [flowPath, ...extra] = positionals;
    if (!flowPath) throw usageError('which flow? give the flow file to check', validateUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, validateUsage);
    // An agent definition (a module, an .agent.md file) is checked by loading it, as a run would.
    const { validation, mcp } = isDefinitionModulePath(flowPath)
      ? { validation: await validateDefinitionFile(flowPath), mcp: { tools: {} as Record<string, string[]> } }
      : await validateFlowPath(flowPath, values);
    const errors = validation.ok ? [] : validation.errors;
    if (values.json) {
      line(output.out, JSON.stringify({ ok: validation.ok, errors, warnings: validation.warnings, ...(Object.keys(mcp.tools).length > 0 && { mcpTools: mcp.tools }) }, null, 2));
    } else {
      const s = styles(output.color);
      for (const [server, names] of Object.entries(mcp.tools)) line(output.out, `MCP server '${server}': ${names.length} tool${names.length === 1 ? '' : 's'}: ${names.join(', ') || 'none'}`);
      if (errors.length + validation.warnings.length > 0) line(output.out, formatDiagnostics([...errors, ...validation.warnings]));
      line(output.out, validation.ok ? s.green(`${flowPath}: valid`) : s.red(`${flowPath}: ${errors.length} error${errors.length === 1 ? '' : 's'}`));
    }
    return validation.ok ? ExitCode.Ok : ExitCode.DataError;
  },
};

const replayUsage = `usage: redflow replay <log.jsonl> [--steps [--full] | --tree] [--json]
       redflow replay <traceId> --nats <url> [--steps [--full] | --tree] [--json]

Rebuilds a run's envelope from its event log (the same fold as the live run) and prints its
timeline and outcome. Damaged records are reported and never folded. With --nats, the log is the
run's events in JetStream.

  --steps   each iteration in detail instead: the messages the model was sent (the system prompt
            once), its answer as logged, the verdict on it, its tokens and time, the tool's input
            and output or error, the memory step and the outcome; failed steps are marked ✖ CODE.
            With --json, { events, problems, outcome, traceId, startedAt, input, systemPrompt,
            parent, iterations, memory, ending, resumedAfter } (see docs/event-log.md)
  --full    with --steps, print long texts whole (they are cut at ${STEP_TEXT_LIMIT} characters)
  --tree    the run and the subagent runs its calls started, down the tree, each with its
            outcome (a subagent run's log is <its trace id>.jsonl beside its caller's; with
            --nats, in the stream of the subagent's prefix). With --json, the tree as JSON

${natsOptionsHelp}`;

export const replay: Command = {
  name: 'replay',
  usage: replayUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      { json: { type: 'boolean' }, steps: { type: 'boolean' }, full: { type: 'boolean' }, tree: { type: 'boolean' }, ...natsOptionSpecs },
      replayUsage,
    );
    if (values.help) return help(output, replayUsage);
    if (values.full && !values.steps) throw usageError('--full goes with --steps', replayUsage);
    const [logPath, ...extra] = positionals;
    if (!logPath) throw usageError('which log? give the .jsonl file of a run (or its trace id with --nats)', replayUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, replayUsage);
    if (values.tree) {
      if (values.steps) throw usageError('--tree and --steps go separately: replay each run of the tree with --steps', replayUsage);
      return (await import('./replayTree.js')).printRunTree(logPath, values, Boolean(values.json), output);
    }
    const { events, problems } = natsUrl(values)
      ? await (await import('./clusterRun.js')).readClusterLog(values, logPath)
      : await readJsonlLog(path.resolve(logPath));
    const envelope = fold(events);
    const status = events.length > 0 ? logStatus(events) : undefined;
    // A torn last record is what a crash leaves (resume cuts it off); anything else is damage.
    const damaged = problems.some((p) => p.code !== ErrorCode.LOG_RECORD_TORN);
    const outcome = status?.kind === 'finished' ? status.outcome : undefined;
    if (values.steps) {
      printSteps(events, problems, { json: Boolean(values.json), full: Boolean(values.full) }, output);
    } else if (values.json) {
      line(output.out, JSON.stringify({ events: events.length, problems, outcome: outcome ?? null, envelope }, null, 2));
    } else {
      const s = styles(output.color);
      line(output.out, s.bold(`run ${envelope.observability.traceId || '(empty log)'}  started ${envelope.observability.startedAt || '-'}  ${events.length} events`));
      if (envelope.lineage !== undefined) line(output.out, s.dim(`forked from run ${envelope.lineage.parent.traceId} after its event ${envelope.lineage.atSeq}${envelope.lineage.parent.log === undefined ? '' : ` (${envelope.lineage.parent.log})`}`));
      line(output.out, `input: ${JSON.stringify(envelope.input)}`);
      for (const text of formatReplayTimeline(events, envelope, output.color)) line(output.out, text);
      if (outcome) {
        line(output.out, formatOutcome(outcome, output.color));
        if (outcome.answer !== undefined) line(output.out, `answer: ${outcome.answer}`);
      } else if (damaged) {
        line(output.out, s.yellow('unfinished, and the log is damaged (below): `redflow resume` refuses it; the events above are the part that can be trusted'));
      } else if (events.length > 0) {
        // A parked run is not interrupted: resume leaves it as it is, its answer carries it on.
        const wait = pendingWait(events);
        line(output.out, s.yellow(wait === undefined ? 'unfinished: `redflow resume` continues it' : `waiting: ${waitingMessage(envelope.observability.traceId, wait)}; ${answeredBy(wait, logPath)} answers it`));
      }
      for (const problem of problems) line(output.err, s.red(`line ${problem.position}: ${problem.code} ${problem.message}`));
    }
    return damaged ? ExitCode.DataError : ExitCode.Ok;
  },
};

const resumeUsage = `usage: redflow resume <log.jsonl> [--flow <flow.json>] [--script <answers.json>] [--json] [--timeout <ms>]
                      [--allow-files <dir> ...]
       redflow resume <traceId> --nats <url> [--json]

Continues an interrupted run from its event log: no completed tool call is made again, and a tool
call that was logged but not completed is re-sent with the same idempotency key. The flow is the
one recorded in the log unless --flow is given, and so is the script of \`run --script\` unless
--script is given. A torn last record (a crash mid-write) is cut off.
With --nats, the run's log is in JetStream and its model and tools are the cluster's workers; a
run whose core worker is alive is left to it (core workers take over dead workers' runs anyway).
${allowFilesOptionHelp}

${natsOptionsHelp}`;

export const resume: Command = {
  name: 'resume',
  usage: resumeUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      { flow: { type: 'string' }, script: { type: 'string' }, json: { type: 'boolean' }, timeout: { type: 'string' }, ...allowFilesOptionSpec, ...natsOptionSpecs },
      resumeUsage,
    );
    if (values.help) return help(output, resumeUsage);
    const [logPath, ...extra] = positionals;
    if (!logPath) throw usageError('which log? give the .jsonl file of the run to continue (or its trace id with --nats)', resumeUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, resumeUsage);
    if (natsUrl(values)) {
      const { resumeOnCluster } = await import('./clusterRun.js');
      return resumeOnCluster({ traceId: logPath, values, json: Boolean(values.json), output, progress: createProgressPrinter(output) });
    }
    const script = values.script !== undefined ? await readAnswersFile(path.resolve(values.script as string)) : undefined;
    const timeoutMs = positiveInteger(values.timeout as string | undefined, '--timeout', resumeUsage);
    const json = Boolean(values.json);
    const progress = createProgressPrinter(output);
    const crash = crashHook();
    // A run of an agent definition names its module in its log: it resumes on that module's model and tools.
    const logged = await loggedDefinitionModule(logPath, values.flow as string | undefined);
    if (logged !== undefined) {
      if (timeoutMs !== undefined) throw usageError('--timeout is for flow files; an agent definition sets its own (runConfig)', resumeUsage);
      return resumeDefinitionLog({ file: logged.file, logPath, events: logged.events, json, output, progress, ...(script && { script }), ...(crash && { onEvent: crash }) });
    }
    const embedded = await resumeFromLog({
      logPath,
      allowFiles: allowedFolders(values),
      ...(values.flow !== undefined && { flowPath: values.flow as string }),
      ...(script && { script }),
      ...(timeoutMs !== undefined && { timeoutMs }),
      onEvent: (event) => {
        if (!json) progress.onEvent(event);
        crash?.(event);
      },
      onChunk: (chunk) => {
        if (!json) progress.onChunk(chunk);
      },
      ...optionalCrash(crashHook('subagents')),
    });
    if (embedded.repaired && !json) {
      line(output.err, styles(output.color).yellow(`the log's last record was torn (line ${embedded.repaired.position}); it was cut off`));
    }
    return report(embedded, json, output, progress);
  },
};

/** Every subcommand, in the order `--help` lists them. */

/** The command that answers a wait, on its run's log. */
function answeredBy(wait: RunWait, log: string): string {
  if (wait.kind === 'approval') return `\`redflow approve|deny ${log}\``;
  if (wait.kind === 'human') return `\`redflow answer ${log} --text <answer>\``;
  return `\`redflow tool-result ${log} --output <json>\``;
}
