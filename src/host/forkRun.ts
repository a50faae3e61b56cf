import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ForkChanges, RunStartedData } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { liveLockHolder } from '../events/fileLock.js';
import { forkLog, forkPoint } from '../events/forkPrefix.js';
import { encodeJsonlLog, readJsonlLog } from '../events/jsonlEventStore.js';
import { logStatus } from '../events/resumePoint.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import { buildFlowActors } from '../runtime/flowActors.js';
import { systemClock } from '../runtime/clock.js';
import { randomIds, type IdSource } from '../runtime/ids.js';
import { DEFAULT_RUNS_DIR, resumeFromLog, type EmbeddedOptions, type EmbeddedRun } from './embeddedFlowRun.js';
import { withModelSettings } from './forkChanges.js';

/**
 * Options of {@link forkRun}.
 *
 * @example
 * ```ts
 * const options: ForkRunOptions = { from: 'run.jsonl', at: 2, answers: { 3: { action: 'final', message: 'done', confidence: 1 } } };
 * ```
 */
export interface ForkRunOptions extends EmbeddedOptions {
  /** The parent run: its JSONL log, or its trace id (its log then in `runsDir`). */
  readonly from: string;
  /** The iteration the fork runs live from (1: from the first model call). */
  readonly at: number;
  /** The flow to go on with; default the parent's. */
  readonly flow?: string;
  /** Model node settings merged over the flow's (`{ "provider": "openai", "model": "gpt-4o-mini" }`). */
  readonly model?: Record<string, unknown>;
  /** The agent's instructions (its system prompt) instead of the flow's. */
  readonly prompt?: string;
  /** Per iteration, the output its tool call gives instead of running the tool. */
  readonly toolResults?: Readonly<Record<number, unknown>>;
  /** Per iteration, the model's answer instead of a live call (an answer-format JSON value, or text). */
  readonly answers?: Readonly<Record<number, unknown>>;
  /** Per iteration, a recorded call answered from the record when the live call matches it (eval seams). */
  readonly replayTools?: ForkChanges['replayTools'];
  /** Where trace ids are looked up and the fork's log goes by default (default `.redflow/runs`). */
  readonly runsDir?: string;
  /** The fork's log (must not exist yet); default `<runsDir>/<traceId>.jsonl`. */
  readonly logPath?: string;
  readonly traceId?: string;
  readonly ids?: IdSource;
}

/**
 * A fork under way: an embedded run, with its trace id.
 *
 * @example
 * ```ts
 * const fork: ForkedRun = await forkRun({ from: 'run.jsonl', at: 2 });
 * console.log(fork.traceId, fork.logPath, (await fork.finished()).outcome.status);
 * ```
 */
export interface ForkedRun extends EmbeddedRun {
  readonly traceId: string;
  /** The parent's log it was forked from. */
  readonly parentLog: string;
}

/**
 * Starts a new run that replays another run's log up to the start of an iteration, then goes on
 * live from there, with the changes given (another flow, model, instructions, scripted answers or
 * tool results). The fork's log begins with its own `run.started` and `run.forked` (its parent and
 * the fork point), then the parent's events up to that point, checked under the fork's flow; it
 * then goes on through the resume path a run takes after a crash (`resumeFromLog`), so a fork
 * killed mid-run is resumed like any run. The parent's log is only read.
 *
 * A parent that has not ended and whose log a live process holds (its lock) is refused: it is
 * still running, and its prefix could still change. A run that crashed, or is parked on a wait,
 * can be forked.
 *
 * @throws RedflowError `LOG_NOT_FOUND`; the log's own damage code (`LOG_RECORD_CORRUPT`,
 *   `LOG_PATH_INVALID`, …); `FORK_RUN_STILL_RUNNING`; `FORK_POINT_OUT_OF_RANGE`;
 *   `FORK_PREFIX_INCOMPATIBLE`.
 *
 * @example
 * ```ts
 * const fork = await forkRun({ from: '.redflow/runs/abc.jsonl', at: 2, model: { model: 'gpt-4o-mini' } });
 * const { outcome } = await fork.finished();
 * ```
 */
export async function forkRun(options: ForkRunOptions): Promise<ForkedRun> {
  const runsDir = options.runsDir ?? DEFAULT_RUNS_DIR;
  const parentLog = path.resolve(await isFile(options.from) ? options.from : path.join(runsDir, `${options.from}.jsonl`));
  const parent = await readParent(parentLog);
  const point = forkPoint(parent, options.at);
  const started = (parent[0] as Extract<AgentEvent, { type: 'run.started' }>).data;
  const flowPath = options.flow === undefined ? started.flow?.path : path.resolve(options.flow);
  if (flowPath === undefined) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `the log ${parentLog} does not say which flow it ran`, { hint: 'give the flow to go on with (--flow <file>)' }));
  }
  const current = await currentAgent(flowPath, options);
  if (current.checkInput !== undefined) {
    const verdict = current.checkInput(started.input);
    if (verdict !== true) {
      throw new RedflowError(
        errorInfo(ErrorCode.FORK_PREFIX_INCOMPATIBLE, `the parent's event 1 does not fit the fork's flow: its trigger's inputSchema refuses the recorded input (${verdict})`, {
          hint: 'fork with a flow whose trigger takes the parent\'s input, or start a new run with `redflow run`',
        }),
      );
    }
  }
  const traceId = options.traceId ?? (options.ids ?? randomIds).traceId();
  const logPath = path.resolve(options.logPath ?? path.join(runsDir, `${traceId}.jsonl`));
  const changes = changesOf(options, flowPath);
  const events = forkLog(point, {
    traceId,
    started: forkStarted(started, current, flowPath, options),
    forked: { parent: { traceId: (parent[0] as AgentEvent).traceId, log: parentLog }, atSeq: point.atSeq, atIteration: options.at, ...(changes && { changes }) },
    time: new Date((options.clock ?? systemClock).now()).toISOString(),
    toolNames: new Set(current.toolSpecs.map((spec) => spec.name)),
  });
  await mkdir(path.dirname(logPath), { recursive: true });
  await writeFile(logPath, encodeJsonlLog(events), { flag: 'wx' }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `${logPath} already holds a run`, { hint: 'give the fork another log file (--log)' }));
  });
  const { runsDir: _runsDir, from: _from, flow: _flow, model: _model, ...embedded } = options;
  const run = await resumeFromLog({ ...embedded, logPath, flowPath });
  return Object.assign(run, { traceId, parentLog });
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then((found) => found.isFile(), () => false);
}

/** The parent's events, read only: a torn last record (a crash) is left out, any other damage refused. */
async function readParent(logPath: string): Promise<readonly AgentEvent[]> {
  const read = await readJsonlLog(logPath);
  const damage = read.problems.find((problem) => problem.code !== ErrorCode.LOG_RECORD_TORN);
  if (damage !== undefined) {
    throw new RedflowError(
      errorInfo(damage.code, `${logPath} line ${damage.position}: ${damage.message}`, {
        hint: 'the log is damaged and cannot be trusted to fork from; `redflow replay` shows what is readable',
      }),
    );
  }
  // LOG_EMPTY or LOG_PATH_INVALID when the log is not a run the statechart could have made.
  logStatus(read.events);
  const last = read.events[read.events.length - 1];
  const holder = last !== undefined && !isTerminal(last) ? await liveLockHolder(logPath) : undefined;
  if (holder !== undefined) {
    throw new RedflowError(
      errorInfo(ErrorCode.FORK_RUN_STILL_RUNNING, `the run ${last?.traceId ?? ''} is still running: process ${holder} writes ${logPath}`, {
        hint: 'wait for it to end (or park on a wait), or stop it, then fork it; a crashed run can be forked as it is',
      }),
    );
  }
  return read.events;
}

/** What the fork's flow makes of the agent: read once to start the fork, its actors then closed. */
async function currentAgent(flowPath: string, options: ForkRunOptions) {
  const { flow, baseDir } = await loadValidFlow(flowPath, undefined, options.allowFiles);
  const actors = await buildFlowActors(withModelSettings(flow, options.model), {
    baseDir,
    ...(options.allowFiles !== undefined && { allowFiles: options.allowFiles }),
    ...(options.env !== undefined && { env: options.env }),
    ...(options.script !== undefined && { script: options.script }),
  });
  await actors.close();
  return { agent: actors.agent, toolSpecs: actors.toolSpecs, checkInput: actors.checkInput, flowId: flow.definition.id };
}

/** The fork's `run.started`: the parent's input and start, the fork's flow, agent and tools. */
function forkStarted(started: RunStartedData, current: Awaited<ReturnType<typeof currentAgent>>, flowPath: string, options: ForkRunOptions): RunStartedData {
  const agent = options.prompt === undefined ? current.agent : { ...current.agent, instructions: options.prompt };
  const allowed = new Set(agent.allowedTools);
  // A fork saves no turn: the conversation is its parent's. A recorded script goes on unless the model changes.
  const { conversationId: _conversationId, flow: _flow, ...rest } = started;
  const script = options.model === undefined ? started.flow?.script : undefined;
  return {
    ...rest,
    agent,
    tools: current.toolSpecs.filter((spec) => allowed.has(spec.name)),
    flow: { ...(current.flowId !== undefined && { id: current.flowId }), path: flowPath, ...(script !== undefined && { script }) },
  };
}

function changesOf(options: ForkRunOptions, flowPath: string): ForkChanges | undefined {
  const changes: ForkChanges = {};
  if (options.flow !== undefined) changes.flow = flowPath;
  if (options.model !== undefined) changes.model = options.model;
  if (options.prompt !== undefined) changes.prompt = true;
  if (options.answers !== undefined) changes.answers = { ...options.answers };
  if (options.toolResults !== undefined) changes.toolResults = { ...options.toolResults };
  if (options.replayTools !== undefined) changes.replayTools = options.replayTools;
  return Object.keys(changes).length === 0 ? undefined : changes;
}
