import path from 'node:path';
import type { AgentActivityEvent } from '../agents/activity.js';
import { AgentExecutor, type AgentRun } from '../agents/agentExecutor.js';
import { isDefinitionModulePath, loadAgentDefinitionModule } from '../agents/definitionModule.js';
import { createScriptedModel } from '../actors/models/scriptedModel.js';
import { readAnswersFile } from '../runtime/flowActors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import type { GivenAnswer } from '../events/pendingWait.js';
import type { EmbeddedRun } from '../host/embeddedFlowRun.js';
import { lateAnswerRefusal } from '../host/takeAnswer.js';
import type { ExitCode } from './exitCodes.js';
import { usageError } from './args.js';
import { line, styles, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { report } from './runReport.js';
import { RedflowError } from '../errors.js';
import { Severity, flowDiagnostic, type FlowDiagnostic } from '../flows/diagnostics.js';

/** What `redflow run <definition.ts>` and `redflow resume` of its log are given. */
interface DefinitionCommand {
  readonly file: string;
  readonly json: boolean;
  readonly output: Output;
  readonly progress: ReturnType<typeof createProgressPrinter>;
  /** Scripted answers replacing the definition's model (`--script`). */
  readonly script?: readonly unknown[];
  /** The file `script` was read from, absolute: `run` records it in the log for a resume. */
  readonly scriptFile?: string;
  /** Called with each event once it is in the log (the crash hook of the tests). */
  readonly onEvent?: (event: AgentEvent) => void;
}

/** The run as `report` shows a flow's: its answer or how it ended, and where its log is. */
function asEmbeddedRun(run: AgentRun, logPath: string): EmbeddedRun {
  return {
    handle: run.handle,
    logPath,
    warnings: [],
    ...(run.repaired !== undefined && { repaired: run.repaired }),
    finished: async () => {
      const { traceId, outcome, envelope, lastSeq } = await run.result;
      return { traceId, outcome, envelope, lastSeq };
    },
  };
}

function executorFor(command: DefinitionCommand): AgentExecutor {
  return new AgentExecutor(command.script === undefined ? {} : { model: createScriptedModel(command.script) });
}

/** The run's events to the progress lines, and its answers' pieces to the status line. */
function viewers(command: DefinitionCommand) {
  return {
    onEvent: (event: AgentEvent) => {
      if (!command.json) command.progress.onEvent(event);
      command.onEvent?.(event);
    },
    onActivity: (activity: AgentActivityEvent) => {
      if (!command.json && activity.type === 'content_chunk') {
        command.progress.onChunk({ iteration: activity.turnNumber, attempt: activity.attempt, text: activity.content });
      }
    },
  };
}

/**
 * `redflow run <module>`: runs the AgentDefinition a `.ts`/`.js` module exports by default, as a
 * flow runs: in this process, logged in `.redflow/runs/<traceId>.jsonl` (or `--log`), shown live,
 * resumed by `redflow resume <log>`. `input` must be a JSON object: the run's inputs by name.
 */
export async function runDefinitionFile(
  command: DefinitionCommand & { readonly input: unknown; readonly usage: string; readonly logPath?: string; readonly traceId?: string },
): Promise<ExitCode> {
  const inputs = command.input === '' ? {} : command.input;
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
    throw usageError('an agent definition takes its inputs as a JSON object: --input \'{"name": "value"}\'', command.usage);
  }
  const definition = await loadAgentDefinitionModule(command.file);
  const run = await executorFor(command).start(definition, {
    inputs: inputs as Record<string, unknown>,
    modulePath: command.file,
    ...(command.scriptFile !== undefined && { scriptFile: command.scriptFile }),
    ...(command.logPath !== undefined && { logPath: command.logPath }),
    ...(command.traceId !== undefined && { traceId: command.traceId }),
    ...viewers(command),
  });
  return report(asEmbeddedRun(run, run.logPath as string), command.json, command.output, command.progress);
}

/**
 * `redflow resume <log>` of a definition's run: its module loaded again, the run continued from its
 * log. With `answer` (`redflow approve|deny|tool-result|answer <log>`), the wait it is parked in
 * takes it, and the run goes on.
 */
export async function resumeDefinitionLog(
  command: DefinitionCommand & { readonly logPath: string; readonly events: readonly AgentEvent[]; readonly answer?: GivenAnswer },
): Promise<ExitCode> {
  const definition = await loadAgentDefinitionModule(command.file);
  if (!command.json) command.progress.resumeFrom(command.events);
  // A run started with `--script` goes on with it unless given another (a missing file is ANSWERS_FILE_NOT_FOUND).
  const first = command.events[0];
  const recorded = first?.type === 'run.started' ? first.data.flow?.script : undefined;
  const script = command.script ?? (recorded === undefined ? undefined : await readAnswersFile(recorded));
  // An answer past the wait's deadline: the executor takes the expiry instead, and the command is
  // refused (WAIT_EXPIRED, exit 65) once the run has ended, as for a flow's run.
  const late = command.answer === undefined ? undefined : lateAnswerRefusal(command.events, command.answer, Date.now());
  const run = await executorFor({ ...command, ...(script !== undefined && { script }) })
    .resume(definition, {
      logPath: command.logPath,
      ...(command.answer !== undefined && { answer: command.answer }),
      ...viewers(command),
    });
  if (late !== undefined) {
    await run.result.catch(() => undefined);
    command.progress.done();
    throw late;
  }
  if (run.repaired && !command.json) {
    line(command.output.err, styles(command.output.color).yellow(`the log's last record was torn (line ${run.repaired.position}); it was cut off`));
  }
  return report(asEmbeddedRun(run, run.logPath as string), command.json, command.output, command.progress);
}

/**
 * The agent definition module a log's run came from (`--flow` when given), with the log's events;
 * undefined for a flow's run.
 */
export async function loggedDefinitionModule(logPath: string, flow: string | undefined): Promise<{ file: string; events: readonly AgentEvent[] } | undefined> {
  if (flow !== undefined && !isDefinitionModulePath(flow)) return undefined;
  const { events } = await readJsonlLog(path.resolve(logPath));
  const first = events[0];
  const file = flow ?? (first?.type === 'run.started' ? first.data.flow?.path : undefined);
  return file !== undefined && isDefinitionModulePath(file) ? { file, events } : undefined;
}

/**
 * `redflow validate` of an agent definition (a module, an `.agent.md` file): loaded and checked as a
 * run would load it; its coded error (with the file's line for an `.agent.md`) is the one error.
 */
export async function validateDefinitionFile(file: string): Promise<{ ok: true; warnings: FlowDiagnostic[] } | { ok: false; errors: FlowDiagnostic[]; warnings: FlowDiagnostic[] }> {
  try {
    await loadAgentDefinitionModule(file);
    return { ok: true, warnings: [] };
  } catch (error) {
    if (!(error instanceof RedflowError)) throw error;
    const details = { ...(error.hint !== undefined && { hint: error.hint }), ...(error.path !== undefined && { path: error.path }) };
    return { ok: false, errors: [flowDiagnostic(Severity.Error, error.code, error.message, details)], warnings: [] };
  }
}
