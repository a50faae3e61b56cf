import type { RunOutcome } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, toErrorInfo, type ErrorInfo } from '../errors.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { describeWait, pendingWait, type RunWait } from '../events/pendingWait.js';
import { createActivityDeriver, type AgentActivityEvent } from '../agents/activity.js';
import type { FlowStore } from '../server/flowStore.js';
import type { RunBackend } from '../server/runBackend.js';
import { runInputOf, type FlowTool } from './flowTools.js';

/** The `_meta` key of a call's result that names the run's trace id. */
export const TRACE_ID_META = 'redflow/traceId';
/** The `_meta` key of a call's result that says where the run is: its outcome's status, or `waiting`. */
export const STATUS_META = 'redflow/status';

/** A `tools/call` result, as MCP's `CallToolResult` has it. */
export interface FlowCallResult {
  readonly content: { readonly type: 'text'; readonly text: string }[];
  readonly isError: boolean;
  readonly structuredContent?: Record<string, unknown>;
  readonly _meta?: Record<string, unknown>;
  /** MCP results may carry more (its schema is open); Redflow's carry only the above. */
  readonly [key: string]: unknown;
}

/** What a call runs with: where flows are and where runs run (the run backend of `redflow serve`). */
export interface FlowCallPorts {
  readonly flows: FlowStore;
  readonly backend: RunBackend;
  /** How a person answers a run that waits, in this mode: the command or the API route. */
  readonly howToAnswer: (traceId: string, wait: RunWait) => string;
}

/** One call of a flow's tool. */
export interface FlowCall {
  readonly tool: FlowTool;
  readonly args: Readonly<Record<string, unknown>> | undefined;
  /** The request's signal: the client's cancellation aborts the run. */
  readonly signal: AbortSignal;
  /** Told what the run is doing, as it does it (a progress notification's message). */
  readonly onProgress?: (message: string) => void;
}

/** Each activity of a run in words, for a progress message (chunks are not followed: no message). */
const PROGRESS_TEXT: { readonly [T in AgentActivityEvent['type']]: (activity: Extract<AgentActivityEvent, { type: T }>, toolOf: (id: string) => string) => string | undefined } = {
  turn_start: (a) => `turn ${a.turnNumber}: asking the model`,
  thinking: (a) => `turn ${a.turnNumber}: ${short(a.content)}`,
  tool_call_start: (a) => `turn ${a.turnNumber}: calling ${a.toolCall.name}`,
  tool_call_end: (a, toolOf) => `turn ${a.turnNumber}: ${toolOf(a.toolCallId)} ${a.ok ? 'answered' : `failed (${short(a.result)})`}`,
  content_chunk: () => undefined,
  tool_progress: (a, toolOf) => `turn ${a.turnNumber}: ${toolOf(a.toolCallId)} ${progressWords(a)}`,
  turn_end: (a) => `turn ${a.turnNumber} done`,
  error: (a) => `${a.error.code}: ${short(a.error.message)}`,
};

/** A tool's progress in words: its message, and how far out of how much when it counts. */
function progressWords(a: { readonly progress?: number; readonly total?: number; readonly message?: string }): string {
  const count = a.progress === undefined ? '' : a.total === undefined ? `${a.progress}` : `${a.progress}/${a.total}`;
  return [count, a.message === undefined ? '' : short(a.message)].filter((part) => part !== '').join(' ') || 'is working';
}

/**
 * Runs one `tools/call` as a run of the tool's flow, through the run backend (its run host): the
 * run has its own log, as any run started by `redflow serve`. The result is the run's answer; a
 * run that ends blocked is an error result with its code and hint; a run that waits for a person
 * is a result that says what it waits for and how to answer. Every result names the trace id in
 * `_meta`. The signal's abort (the client's cancellation) aborts the run.
 *
 * @example
 * ```ts
 * const result = await callFlowTool({ flows, backend, howToAnswer }, { tool, args: { input: 'Where is A-1001?' }, signal });
 * console.log(result.content[0]?.text, result._meta?.['redflow/traceId']);
 * ```
 */
export async function callFlowTool(ports: FlowCallPorts, call: FlowCall): Promise<FlowCallResult> {
  const { tool, signal } = call;
  let traceId: string;
  try {
    const input = runInputOf(tool, call.args);
    const { flow, flowPath } = await ports.flows.runnable(tool.flowId);
    if (signal.aborted) return failed(errorInfo(ErrorCode.RUN_ABORTED, 'the call was cancelled before its run started'));
    ({ traceId } = await ports.backend.start({ flowId: tool.flowId, flowPath, flow: flow.definition, input }));
  } catch (thrown) {
    // Nothing was recorded: an input the flow refuses, a flow that stopped validating, a server closing.
    return failed(toErrorInfo(thrown, ErrorCode.HTTP_INTERNAL_ERROR));
  }
  // The first progress names the run: a client that cancels the call can still find its log.
  call.onProgress?.(`run ${traceId} started`);
  const cancel = () => void ports.backend.abort(traceId, 'cancelled by the MCP client').catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  // Cancelled while the run was starting: the listener came too late to hear it.
  if (signal.aborted) cancel();
  try {
    const events = await followUntilSettled(ports.backend, traceId, signal, call.onProgress);
    const last = events.at(-1);
    if (last !== undefined && (last.type === AgentEventType.RunCompleted || last.type === AgentEventType.RunFailed)) {
      return ended(tool, traceId, last.data.outcome);
    }
    const wait = pendingWait(events);
    if (wait !== undefined) {
      await untilLetGo(ports.backend, traceId);
      return waiting(traceId, wait, ports.howToAnswer(traceId, wait));
    }
    return failed(
      signal.aborted
        ? errorInfo(ErrorCode.RUN_ABORTED, `the call was cancelled; its run ${traceId} is aborted`)
        : errorInfo(ErrorCode.SERVER_CLOSING, `the server is shutting down and stopped following run ${traceId}: its log says how it ended`, {
            hint: 'an embedded run is aborted when its server stops (redflow replay shows its log); call the tool again once the server is back',
          }),
      traceId,
    );
  } catch (thrown) {
    return failed(toErrorInfo(thrown, ErrorCode.LOG_STORE_UNAVAILABLE), traceId);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** The run's events until it ends or parks in a wait (or the follow ends: cancelled, server closing), telling its progress. */
async function followUntilSettled(backend: RunBackend, traceId: string, signal: AbortSignal, onProgress?: (message: string) => void): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  const activity = createActivityDeriver();
  const tools = new Map<string, string>();
  const toolOf = (id: string) => tools.get(id) ?? 'the tool';
  for await (const event of backend.follow(traceId, 0, { signal })) {
    events.push(event);
    for (const each of activity.event(event)) {
      if (each.type === 'tool_call_start') tools.set(each.toolCall.id, each.toolCall.name);
      const text = (PROGRESS_TEXT[each.type] as (a: AgentActivityEvent, toolOf: (id: string) => string) => string | undefined)(each, toolOf);
      if (text !== undefined) onProgress?.(text);
    }
    // The log alone says the run waits (the event that began the wait is its last): it is parked.
    if (isTerminal(event) || pendingWait(events) !== undefined) break;
  }
  return events;
}

/** The longest single wait for a parked run to let go of its log (the waits double from 10 ms: about 2.5 s in all). */
const LET_GO_MAX_WAIT_MS = 1280;

/**
 * Waits until the backend no longer holds the run as under way. The log has the wait before the
 * run has let go of it, and an answer sent the moment the call answers (a quick client, a script)
 * would find the run still under way and be refused; the backend tells no event of it, so it is asked.
 */
async function untilLetGo(backend: RunBackend, traceId: string): Promise<void> {
  for (let waitMs = 10; waitMs <= LET_GO_MAX_WAIT_MS; waitMs *= 2) {
    const run = await backend.get(traceId);
    if (run === undefined || run.status !== 'running') return;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** The result of a run that ended. */
function ended(tool: FlowTool, traceId: string, outcome: RunOutcome): FlowCallResult {
  const meta = { [TRACE_ID_META]: traceId, [STATUS_META]: outcome.status };
  if (outcome.status === 'blocked') {
    return failed((outcome.error as ErrorInfo | undefined) ?? errorInfo(ErrorCode.RUN_ABORTED, `run ${traceId} ended blocked (${outcome.reason})`), traceId, outcome.status);
  }
  if (outcome.status === 'escalate') {
    return text(`The agent did not answer: it escalated to a person${outcome.question ? `: ${outcome.question.question}` : ''} (run ${traceId}).`, meta);
  }
  if (outcome.status === 'delegate') {
    return text(`The agent hands the task over${outcome.handoff ? ` to ${outcome.handoff.agentId}: ${outcome.handoff.task}` : ''} (run ${traceId}).`, meta);
  }
  const output = outcome.output;
  const structured = tool.outputSchema !== undefined && outcome.validated === true && typeof output === 'object' && output !== null && !Array.isArray(output);
  const answer = outcome.answer ?? (output === undefined ? '' : JSON.stringify(output));
  return { ...text(answer, meta), ...(structured && { structuredContent: output as Record<string, unknown> }) };
}

/** The result of a run parked in a wait: not an error, the question and how to answer it. */
function waiting(traceId: string, wait: RunWait, howToAnswer: string): FlowCallResult {
  // describeWait says the question itself; its reason is said after it.
  const question = wait.kind === 'human' && wait.question?.reason !== undefined ? `\nWhy the agent asks: ${wait.question.reason}` : '';
  const input = wait.kind === 'human' ? '' : `\nThe call's input: ${JSON.stringify(wait.input)}`;
  return text(
    `The run ${traceId} waits for ${describeWait(wait)}, until ${wait.deadline}.${question}${input}\nTo answer: ${howToAnswer}\nThe run goes on once answered; until then nothing runs.`,
    { [TRACE_ID_META]: traceId, [STATUS_META]: 'waiting' },
  );
}

function failed(error: ErrorInfo, traceId?: string, status: string = 'blocked'): FlowCallResult {
  const run = traceId === undefined ? '' : ` (run ${traceId})`;
  return {
    content: [{ type: 'text', text: `${error.code}: ${error.message}${run}${error.hint ? `\nhint: ${error.hint}` : ''}` }],
    isError: true,
    _meta: { ...(traceId !== undefined && { [TRACE_ID_META]: traceId, [STATUS_META]: status }), 'redflow/code': error.code },
  };
}

function text(value: string, meta: Record<string, unknown>): FlowCallResult {
  return { content: [{ type: 'text', text: value }], isError: false, _meta: meta };
}

/** A long text cut for a one-line progress message. */
function short(value: string): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}
