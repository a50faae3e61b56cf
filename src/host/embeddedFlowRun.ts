import type { InspectionEvent } from 'xstate';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AgentCoreReactConfig, ParentCall, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { openJsonlEventStore, readJsonlLog, type JsonlFsyncMode } from '../events/jsonlEventStore.js';
import { readResumableLog } from '../runtime/resumableLog.js';
import type { LogProblem } from '../events/eventStore.js';
import { logStatus } from '../events/resumePoint.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import type { FlowDiagnostic, ResolvedFlow } from '../flows/validateFlow.js';
import { isValidConversationId } from '../actors/memory.js';
import type { RunLiveMessage } from '../runtime/serveActors.js';
import { Subject } from '../actors/subjects.js';
import { buildFlowActors, readAnswersFile, type FlowActors } from '../runtime/flowActors.js';
import { serveActors, type ServedActors } from '../runtime/embeddedActors.js';
import { resumeRun, startRun } from '../runtime/runAgent.js';
import type { RunHandle, RunMemory, RunResult } from '../runtime/runSession.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { randomIds, type IdSource } from '../runtime/ids.js';
import { admitRun } from './admission.js';
import { takeAnswer } from './takeAnswer.js';
import { embeddedSubagents } from '../runtime/embeddedSubagents.js';
import { forkChangesOf, withForkChanges, withModelSettings } from './forkChanges.js';
import type { SubagentHost } from '../runtime/subagentTool.js';

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
  /**
   * The API key the run's caller brought ("bring your own key"): the run's model calls send it
   * instead of `$<apiKeyEnv>` (which is then not required). It is never written to the log, an
   * event, output or an error: the model gets it beside each request, holds it as a secret only
   * while a call runs, and redacts it from what the server sends back.
   */
  readonly modelApiKey?: string;
  /**
   * Sees each piece of the model's answers as it streams, for a live view (`redflow run` shows it
   * on its status line), and each word of a tool call in flight (its progress: `isToolUpdate`).
   * Never logged: the log records each answer once, whole.
   */
  readonly onChunk?: (chunk: RunLiveMessage) => void;
  /**
   * Sees every event of the run's subagent runs (and of theirs), once it is in its log; their own
   * logs are beside the run's, named `<traceId>-<iteration>.jsonl` after the call that started each.
   */
  readonly onSubagentEvent?: (event: AgentEvent) => void;
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
  /** The call of another run that starts this one as its subagent (recorded in `run.started`). */
  readonly parent?: ParentCall;
  /**
   * The file `script` was read from (`run --script`), absolute: recorded in `run.started`
   * (`flow.script`), so a resume from the log answers with the same script, not the flow's model.
   */
  readonly scriptFile?: string;
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
  const { flow, baseDir, warnings, flowPath } = await loadValidFlow(options.flowPath, undefined, options.allowFiles);
  const traceId = options.traceId ?? (options.ids ?? randomIds).traceId();
  const logPath = path.resolve(options.logPath ?? path.join(DEFAULT_RUNS_DIR, `${traceId}.jsonl`));
  const actors = await flowActorsOf(flow, baseDir, options, logPath);
  const { checkInput } = actors;
  // Admitted once, before the log exists: an input the run cannot hold leaves nothing behind.
  admitRun({
    input: options.input,
    agent: actors.agent,
    tools: allowedSpecs(actors.toolSpecs, actors.agent),
    ...optional('contextBudget', actors.contextBudget),
    ...(checkInput && {
      checkInput: (input: unknown) => {
        const verdict = checkInput(input);
        if (verdict === true) return;
        throw new RedflowError(
          errorInfo(ErrorCode.RUN_INPUT_INVALID, `the input does not match the trigger's inputSchema: ${verdict}`, {
            hint: 'see the flow\'s trigger.input node for what the input must look like',
          }),
        );
      },
    }),
  });
  if (options.conversationId !== undefined && !isValidConversationId(options.conversationId)) {
    throw new RedflowError(
      errorInfo(ErrorCode.MEMORY_KEY_INVALID, `"${options.conversationId}" is not a valid conversation id`, {
        hint: 'use 1–128 letters, digits, _, - or . (not starting with .)',
      }),
    );
  }
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
  followChunks(served, traceId, options.onChunk);
  const memory = runMemory(served, actors, options.conversationId);
  const handle = startRun({
    ...environment(options, served, actors.agent, allowedSpecs(actors.toolSpecs, actors.agent)),
    ...(actors.contextBudget && { contextBudget: actors.contextBudget }),
    modelName: actors.modelName,
    store,
    input: options.input,
    traceId,
    flow: { ...(flow.definition.id !== undefined && { id: flow.definition.id }), path: flowPath, ...optional('script', options.scriptFile) },
    ...(memory && { memory }),
    ...(options.parent !== undefined && { parent: options.parent }),
  });
  // A run that fails before its first event (its memory cannot be loaded) leaves no empty log behind.
  const closeLog = async () => {
    await store.close();
    if (store.lastSeq() === 0) await rm(logPath, { force: true });
  };
  return embeddedRun(handle, logPath, warnings, served, closeLog, actors.close);
}

/** Options of {@link resumeFromLog}: `script` replaces the one the run was started with (`run.started`'s `flow.script`), if any. */
export interface ResumeOptions extends EmbeddedOptions {
  readonly logPath: string;
  /** The flow to take the actors from; default the flow recorded in the log. */
  readonly flowPath?: string;
  /**
   * The answer to the wait the log ends in (an approval, a client tool's result, the deadline
   * passing): the run resumes into its wait and takes it. Judged against the log as read once its
   * lock is held, so of two processes answering one wait, one wins and the other is refused
   * (`WAIT_ALREADY_ANSWERED`). One past the wait's deadline is not taken: the run takes the
   * expiry and ends blocked (`wait_expired`), and then `resumeFromLog` rejects with `WAIT_EXPIRED`.
   */
  readonly answer?: WaitAnswer;
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
  const read = await readResumableLog(logPath);
  const { repaired } = read;
  const status = logStatus(read.events);
  const traceId = (read.events[0] as AgentEvent).traceId;
  // What the run goes on with: its flow's actors, and its log opened for writing (held locked).
  const open = async () => {
    const flowPath = options.flowPath ?? status.started.flow?.path;
    if (!flowPath) {
      throw new RedflowError(
        errorInfo(ErrorCode.CLI_USAGE, 'the log does not say which flow it ran', { hint: 'give the flow with --flow <file>' }),
      );
    }
    const loaded = await loadValidFlow(flowPath, undefined, options.allowFiles);
    const { baseDir, warnings } = loaded;
    // A fork goes on with the changes its log records (its model's settings, scripted answers and tool results).
    const changes = forkChangesOf(read.events);
    const flow = withModelSettings(loaded.flow, changes?.model);
    // A run started with a script goes on with it (a missing file is ANSWERS_FILE_NOT_FOUND), unless given another.
    const recordedScript = status.started.flow?.script;
    const script = options.script ?? (recordedScript === undefined ? undefined : await readAnswersFile(recordedScript));
    const actors = withForkChanges(await flowActorsOf(flow, baseDir, { ...options, ...optional('script', script) }, logPath), changes);
    const store = await openJsonlEventStore(logPath, optional('fsync', options.fsync)).catch(async (error: unknown) => {
      await actors.close();
      throw error;
    });
    const served = serve(actors, flow);
    followChunks(served, traceId, options.onChunk);
    const close = async () => {
      await store.close();
      await served.close();
      await actors.close();
    };
    return { actors, store, served, warnings, close };
  };
  // The log decides what the agent is: its config and tools as recorded when the run started.
  const resume = async (opened: Awaited<ReturnType<typeof open>>, events: readonly AgentEvent[], answer: WaitAnswer | undefined): Promise<EmbeddedRun> => {
    const { actors, store, served, warnings, close } = opened;
    const memory = runMemory(served, actors, status.started.conversationId);
    let handle: RunHandle;
    try {
      handle = resumeRun({
        ...environment(options, served, status.started.agent, status.started.tools),
        ...(actors.contextBudget && { contextBudget: actors.contextBudget }),
        modelName: actors.modelName,
        store,
        events,
        ...(memory && { memory }),
        ...(answer !== undefined && { answer }),
      });
    } catch (error) {
      await close();
      throw error;
    }
    return embeddedRun(handle, logPath, warnings, served, store.close, actors.close, repaired);
  };
  if (options.answer === undefined) return resume(await open(), read.events, undefined);
  // The run host's answer, with the log's lock as the run's ownership: judged before any flow is
  // loaded, and again once the lock is held (another process may have answered the wait first).
  // One past the wait's deadline is its expiry: the run ends blocked (wait_expired), and the
  // answer is then refused with WAIT_EXPIRED, as answerWaitingRun and the HTTP routes refuse it.
  let opened: Awaited<ReturnType<typeof open>> | undefined;
  const taken = await takeAnswer(traceId, options.answer, {
    read: async () => read.events,
    ownership: {
      take: async () => {
        opened = await open();
        return { events: (await readJsonlLog(logPath)).events };
      },
      release: async () => opened?.close(),
    },
    resume: (run) => resume(opened as NonNullable<typeof opened>, run.events, run.answer),
    now: () => (options.clock ?? systemClock).now(),
  });
  const { resumed, late } = taken as NonNullable<typeof taken>;
  if (late === undefined) return resumed;
  // Refused once the run has taken the expiry and ended: its log says how when the caller looks.
  await resumed.finished().catch(() => undefined);
  throw late;
}

/**
 * The run's subagents, run in this process with logs in `runsDir` (the run's own folder): they
 * take the run's environment, fsync policy, clock and subagent event listener (their own events go
 * to it too, and so do their subagents').
 */
/** The actors of a flow run in this process: its model, tools and memory, its subagents logged beside `logPath`. */
function flowActorsOf(flow: Parameters<typeof buildFlowActors>[0], baseDir: string, options: EmbeddedOptions & { readonly modelApiKey?: string }, logPath: string) {
  return buildFlowActors(flow, {
    baseDir,
    ...optional('allowFiles', options.allowFiles),
    ...optional('env', options.env),
    ...optional('script', options.script),
    ...optional('modelApiKey', options.modelApiKey),
    subagents: subagentsOf(options, path.dirname(logPath)),
  });
}

function subagentsOf(options: EmbeddedOptions, runsDir: string): SubagentHost {
  const inherited = {
    ...optional('env', options.env),
    ...optional('fsync', options.fsync),
    ...optional('clock', options.clock),
    ...optional('onEvent', options.onSubagentEvent),
    ...optional('onSubagentEvent', options.onSubagentEvent),
  };
  return embeddedSubagents({
    runsDir,
    run: (child) => runFlowFile({ ...inherited, ...child }),
    resume: (child) => resumeFromLog({ ...inherited, ...child }),
  });
}

function serve(actors: FlowActors, flow: ResolvedFlow): ServedActors {
  return serveActors({
    model: actors.model,
    ...(actors.verifier && { verifier: { model: actors.verifier.model, id: actors.verifier.nodeId } }),
    tools: actors.tools,
    modelId: flow.model.id,
    ...(actors.memory && { memory: actors.memory.store, memoryId: actors.memory.nodeId }),
  });
}

/** Hands the run's answers' pieces to `onChunk` (until the actors stop being served, which ends the subscription). */
function followChunks(served: ServedActors, traceId: string, onChunk: ((chunk: RunLiveMessage) => void) | undefined): void {
  if (onChunk === undefined) return;
  served.transport.subscribe(Subject.runChunk(served.prefix, traceId), (message) => onChunk(message.data as RunLiveMessage));
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
