import path from 'node:path';
import type { ForkChanges, ForkParent, RunStartedData } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ReadResult } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { forkLog, forkPoint } from '../events/forkPrefix.js';
import { logStatus } from '../events/resumePoint.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import { buildFlowActors } from '../runtime/flowActors.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { randomIds, type IdSource } from '../runtime/ids.js';
import { withModelSettings } from './forkChanges.js';

// What a fork is before it runs, wherever it runs: its log (its start, `run.forked`, the parent's
// prefix checked under the fork's flow). `forkRun` writes it to a file and resumes it here; a fork
// on a cluster (src/nats/cluster/clusterFork.ts) appends it to the trace stream, where a core worker
// resumes it. One check of the prefix, so both refuse a fork with the same codes.

/**
 * What a fork is made of, wherever it runs.
 *
 * @example
 * ```ts
 * const options: ForkPlanOptions = { at: 2, prompt: 'Answer in one sentence.' };
 * ```
 */
export interface ForkPlanOptions {
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
  readonly script?: readonly unknown[];
  readonly env?: NodeJS.ProcessEnv;
  readonly allowFiles?: readonly string[];
  readonly clock?: Clock;
  readonly traceId?: string;
  readonly ids?: IdSource;
}

/**
 * A fork's log, ready to be stored and resumed.
 *
 * @example
 * ```ts
 * const plan: ForkPlan = await planFork(parentEvents, { traceId: 'abc' }, { at: 2 });
 * console.log(plan.traceId, plan.events[1]?.type); // run.forked
 * ```
 */
export interface ForkPlan {
  readonly traceId: string;
  /** The flow the fork goes on with (the given one, or the one its parent's log names). */
  readonly flowPath: string;
  /** Its log: `run.started`, `run.forked`, then the parent's prefix. */
  readonly events: readonly AgentEvent[];
}

/**
 * Refuses a parent log that cannot be trusted to fork from: any damage but a torn last record (a
 * crash, left out), an empty log, a log the statechart could not have made.
 *
 * @throws RedflowError the log's own damage code (`LOG_RECORD_CORRUPT`, `LOG_EMPTY`, `LOG_PATH_INVALID`, …).
 *
 * @example
 * ```ts
 * const events = checkParentLog(await readJsonlLog('run.jsonl'), 'run.jsonl');
 * ```
 */
export function checkParentLog(read: ReadResult, where: string): readonly AgentEvent[] {
  const damage = read.problems.find((problem) => problem.code !== ErrorCode.LOG_RECORD_TORN);
  if (damage !== undefined) {
    throw new RedflowError(
      errorInfo(damage.code, `${where} line ${damage.position}: ${damage.message}`, {
        hint: 'the log is damaged and cannot be trusted to fork from; `redflow replay` shows what is readable',
      }),
    );
  }
  logStatus(read.events);
  return read.events;
}

/**
 * The fork's log: its own `run.started` (the parent's input, the fork's flow, agent and tools),
 * `run.forked` (its parent, the fork point, its changes), then the parent's events up to the
 * start of iteration `at`, checked to be a path the fork's flow can take.
 *
 * @throws RedflowError `FORK_POINT_OUT_OF_RANGE`; `FORK_PREFIX_INCOMPATIBLE`; `CLI_USAGE` when no
 *   flow is given and the parent's log names none; the flow's own errors (`FLOW_*`).
 *
 * @example
 * ```ts
 * const plan = await planFork(parentEvents, { traceId: 'abc', log: 'runs/abc.jsonl' }, { at: 2, answers: { 2: 'done' } });
 * ```
 */
export async function planFork(parent: readonly AgentEvent[], parentRef: ForkParent, options: ForkPlanOptions): Promise<ForkPlan> {
  const point = forkPoint(parent, options.at);
  const started = (parent[0] as Extract<AgentEvent, { type: 'run.started' }>).data;
  const flowPath = options.flow === undefined ? started.flow?.path : path.resolve(options.flow);
  if (flowPath === undefined) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `the log of ${parentRef.log ?? parentRef.traceId} does not say which flow it ran`, { hint: 'give the flow to go on with (--flow <file>)' }));
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
  const changes = changesOf(options, flowPath);
  const events = forkLog(point, {
    traceId,
    started: forkStarted(started, current, flowPath, options),
    forked: { parent: parentRef, atSeq: point.atSeq, atIteration: options.at, ...(changes && { changes }) },
    time: new Date((options.clock ?? systemClock).now()).toISOString(),
    toolNames: new Set(current.toolSpecs.map((spec) => spec.name)),
  });
  return { traceId, flowPath, events };
}

/** What the fork's flow makes of the agent: read once to start the fork, its actors then closed. */
async function currentAgent(flowPath: string, options: ForkPlanOptions) {
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
function forkStarted(started: RunStartedData, current: Awaited<ReturnType<typeof currentAgent>>, flowPath: string, options: ForkPlanOptions): RunStartedData {
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

function changesOf(options: ForkPlanOptions, flowPath: string): ForkChanges | undefined {
  const changes: ForkChanges = {};
  if (options.flow !== undefined) changes.flow = flowPath;
  if (options.model !== undefined) changes.model = options.model;
  if (options.prompt !== undefined) changes.prompt = true;
  if (options.answers !== undefined) changes.answers = { ...options.answers };
  if (options.toolResults !== undefined) changes.toolResults = { ...options.toolResults };
  if (options.replayTools !== undefined) changes.replayTools = options.replayTools;
  return Object.keys(changes).length === 0 ? undefined : changes;
}
