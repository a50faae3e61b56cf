import type { InspectionEvent } from 'xstate';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { openJsonlEventStore, readJsonlLog, repairTornTail, type JsonlFsyncMode } from '../events/jsonlEventStore.js';
import type { LogProblem } from '../events/eventStore.js';
import { logStatus } from '../events/resumePoint.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import type { FlowDiagnostic, ResolvedFlow } from '../flows/validateFlow.js';
import { isValidConversationId } from '../actors/memory.js';
import { buildFlowActors, type FlowActors } from './flowActors.js';
import { checkRunInput } from './dataLimits.js';
import { serveActors, type ServedActors } from './embeddedActors.js';
import { resumeRun, startRun, type RunHandle, type RunMemory, type RunResult } from './runAgent.js';
import type { Clock } from './clock.js';
import { randomIds, type IdSource } from './ids.js';

/** Where embedded runs keep their logs unless told otherwise. */
export const DEFAULT_RUNS_DIR = path.join('.redflow', 'runs');

/** Options shared by {@link runFlowFile} and {@link resumeFromLog}. */
export interface EmbeddedOptions {
  /** Answers for a scripted model that replaces the flow's model. */
  readonly script?: readonly unknown[];
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
  readonly fsync?: JsonlFsyncMode;
  /** Called with each event once it is in the log (after fsync). */
  readonly onEvent?: (event: AgentEvent) => void;
  /** Sees every inspection event of the run's statechart (the Stately inspector attaches here). */
  readonly inspect?: (event: InspectionEvent) => void;
  /** Folders besides the flow file's own where the files it names may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
}

/** Options of {@link runFlowFile}. */
export interface FlowRunOptions extends EmbeddedOptions {
  readonly flowPath: string;
  readonly input: unknown;
  /** The JSONL log to write (must not exist yet); default `.redflow/runs/<traceId>.jsonl`. */
  readonly logPath?: string;
  readonly traceId?: string;
  readonly ids?: IdSource;
  /** Loads this conversation's memory into the run and saves the new turn at the end. */
  readonly conversationId?: string;
}

/** A run of a flow file, under way. */
export interface EmbeddedRun {
  readonly handle: RunHandle;
  readonly logPath: string;
  /** The flow's warnings (a tool without an input schema, …). */
  readonly warnings: readonly FlowDiagnostic[];
  /** What was found wrong in the log before resuming (a torn last record, repaired). */
  readonly repaired?: LogProblem;
  /** Waits for the run, then closes the log and the actors. */
  finished(): Promise<RunResult>;
}

/**
 * Runs a flow file in embedded mode: its actors in this process, its log in a JSONL file.
 *
 * @example
 * ```ts
 * const run = await runFlowFile({ flowPath: 'examples/order-status/flow.json', input: 'Where is A-1001?' });
 * const { outcome } = await run.finished();
 * ```
 */
export async function runFlowFile(options: FlowRunOptions): Promise<EmbeddedRun> {
  // First: an input the run cannot hold must leave nothing behind, not even a log.
  checkRunInput(options.input);
  const { flow, baseDir, warnings, flowPath } = await loadValidFlow(options.flowPath, undefined, options.allowFiles);
  const actors = await buildFlowActors(flow, { baseDir, ...optional('allowFiles', options.allowFiles), ...optional('env', options.env), ...optional('script', options.script) });
  if (actors.checkInput) {
    const verdict = actors.checkInput(options.input);
    if (verdict !== true) {
      throw new RedflowError(
        errorInfo(ErrorCode.RUN_INPUT_INVALID, `the input does not match the trigger's inputSchema: ${verdict}`, {
          hint: 'see the flow\'s trigger.input node for what the input must look like',
        }),
      );
    }
  }
  if (options.conversationId !== undefined && !isValidConversationId(options.conversationId)) {
    throw new RedflowError(
      errorInfo(ErrorCode.MEMORY_KEY_INVALID, `"${options.conversationId}" is not a valid conversation id`, {
        hint: 'use 1–128 letters, digits, _, - or . (not starting with .)',
      }),
    );
  }
  const traceId = options.traceId ?? (options.ids ?? randomIds).traceId();
  const logPath = path.resolve(options.logPath ?? path.join(DEFAULT_RUNS_DIR, `${traceId}.jsonl`));
  await mkdir(path.dirname(logPath), { recursive: true });
  const store = await openJsonlEventStore(logPath, optional('fsync', options.fsync));
  if (store.lastSeq() > 0) {
    await store.close();
    throw new RedflowError(
      errorInfo(ErrorCode.CLI_USAGE, `${logPath} already holds a run`, {
        hint: 'use `redflow resume` to continue it, or give another --log file',
      }),
    );
  }
  const served = serve(actors, flow);
  const memory = runMemory(served, actors, options.conversationId);
  const handle = startRun({
    ...environment(options, served, actors.agent, allowedSpecs(served.tools, actors.agent)),
    store,
    input: options.input,
    traceId,
    flow: { ...(flow.definition.id !== undefined && { id: flow.definition.id }), path: flowPath },
    ...(memory && { memory }),
  });
  // A run that fails before its first event (its memory cannot be loaded) leaves no empty log behind.
  const closeLog = async () => {
    await store.close();
    if (store.lastSeq() === 0) await rm(logPath, { force: true });
  };
  return embeddedRun(handle, logPath, warnings, served, closeLog, actors.close);
}

/** Options of {@link resumeFromLog}. */
export interface ResumeOptions extends EmbeddedOptions {
  readonly logPath: string;
  /** The flow to take the actors from; default the flow recorded in the log. */
  readonly flowPath?: string;
}

/**
 * Continues an interrupted embedded run from its JSONL log. A torn last record (a crash in the
 * middle of a write) is cut off and reported; any other damage stops with an error. The agent
 * config and tool specs come from the log, so the run goes on exactly as it started.
 *
 * @example
 * ```ts
 * const run = await resumeFromLog({ logPath: '.redflow/runs/abc.jsonl' });
 * const { outcome } = await run.finished();
 * ```
 */
export async function resumeFromLog(options: ResumeOptions): Promise<EmbeddedRun> {
  const logPath = path.resolve(options.logPath);
  let read = await readJsonlLog(logPath);
  let repaired: LogProblem | undefined;
  const [problem] = read.problems;
  if (problem && problem.code === ErrorCode.LOG_RECORD_TORN) {
    await repairTornTail(logPath);
    repaired = problem;
    read = await readJsonlLog(logPath);
  }
  const [damage] = read.problems;
  if (damage) {
    throw new RedflowError(
      errorInfo(damage.code, `${logPath} line ${damage.position}: ${damage.message}`, {
        hint: 'the log is damaged before its end and cannot be trusted to resume from; `redflow replay` shows what is readable',
      }),
    );
  }
  const status = logStatus(read.events);
  const flowPath = options.flowPath ?? status.started.flow?.path;
  if (!flowPath) {
    throw new RedflowError(
      errorInfo(ErrorCode.CLI_USAGE, 'the log does not say which flow it ran', { hint: 'give the flow with --flow <file>' }),
    );
  }
  const { flow, baseDir, warnings } = await loadValidFlow(flowPath, undefined, options.allowFiles);
  const actors = await buildFlowActors(flow, { baseDir, ...optional('allowFiles', options.allowFiles), ...optional('env', options.env), ...optional('script', options.script) });
  const store = await openJsonlEventStore(logPath, optional('fsync', options.fsync));
  const served = serve(actors, flow);
  const conversationId = status.started.conversationId;
  const memory = runMemory(served, actors, conversationId);
  // The log decides what the agent is: its config and tools as recorded when the run started.
  const handle = resumeRun({
    ...environment(options, served, status.started.agent, status.started.tools),
    store,
    events: read.events,
    ...(memory && { memory }),
  });
  return embeddedRun(handle, logPath, warnings, served, store.close, actors.close, repaired);
}

function serve(actors: FlowActors, flow: ResolvedFlow): ServedActors {
  return serveActors({
    model: actors.model,
    tools: actors.tools,
    modelId: flow.model.id,
    ...(actors.memory && { memory: actors.memory.store, memoryId: actors.memory.nodeId }),
  });
}

function runMemory(served: ServedActors, actors: FlowActors, conversationId: string | undefined): RunMemory | undefined {
  if (!served.memorySubjects || !actors.memory || conversationId === undefined) return undefined;
  return { ...served.memorySubjects, conversationId, maxTurns: actors.memory.maxTurns };
}

function allowedSpecs(specs: readonly ToolSpec[], agent: AgentCoreReactConfig): ToolSpec[] {
  const allowed = new Set(agent.allowedTools);
  return specs.filter((spec) => allowed.has(spec.name));
}

function environment(options: EmbeddedOptions, served: ServedActors, agent: AgentCoreReactConfig, tools: readonly ToolSpec[]) {
  return {
    agent,
    tools,
    transport: served.transport,
    subjects: served.subjects,
    ...optional('clock', options.clock),
    ...optional('timeoutMs', options.timeoutMs),
    ...optional('signal', options.signal),
    ...optional('onEvent', options.onEvent),
    ...optional('inspect', options.inspect),
  };
}

function embeddedRun(
  handle: RunHandle,
  logPath: string,
  warnings: readonly FlowDiagnostic[],
  served: ServedActors,
  closeLog: () => Promise<void>,
  /** Releases what the tools hold: a tool.postgres pool (made at its first call, so an error before the run leaks none). */
  closeActors: () => Promise<void>,
  repaired?: LogProblem,
): EmbeddedRun {
  return {
    handle,
    logPath,
    warnings,
    ...(repaired && { repaired }),
    async finished() {
      try {
        return await handle.result;
      } finally {
        try {
          await closeLog();
          await served.close();
        } finally {
          await closeActors();
        }
      }
    },
  };
}

/** `{ [key]: value }` when the value is defined, else `{}`: for optional options without `undefined`s. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
