/**
 * What the run panels show at one position of a run's log: the statechart state, the envelope,
 * the timeline, the errors, and which flow nodes are at work. Pure: the same steps and position
 * always give the same view, live or scrubbed.
 */
import type { AgentEnvelope, ErrorInfoData, IterationStep } from '../../contracts/schema-types.js';
import { ErrorCode } from '../../errors.js';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import { emptyEnvelope } from '../../events/evolve.js';
import { pendingWait, type RunWait } from '../../events/pendingWait.js';
import type { RunStep } from '../../machines/runSteps.js';
import { runDetailsOfSteps, type RunDetails } from '../../machines/stepDetails.js';
import { isCoreType, isModelType, isOutputType, isToolType } from '../../flows/nodeTypes.js';
import type { ReactState } from '../../machines/reactState.js';

/** One error of a run, as the Errors tab lists it. */
export interface RunError {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
  readonly iteration: number;
  /** Where it was recorded: the run's outcome, or a tool call (a tool error does not stop the run). */
  readonly source: 'outcome' | 'tool';
  readonly tool?: string;
  readonly seq: number;
}

/** The run at one position of its log. */
export interface RunView {
  /** Index in `steps` (the scrubber's value); -1 when there is no event yet. */
  readonly index: number;
  readonly step: RunStep | undefined;
  readonly previous: RunStep | undefined;
  readonly state: ReactState | undefined;
  readonly envelope: AgentEnvelope;
  readonly timeline: readonly IterationStep[];
  readonly errors: readonly RunError[];
  /** Each iteration in detail (messages sent, raw answer, verdict, tool call), as far as the log goes here. */
  readonly details: RunDetails;
  /** What the run waits for at this position (an approval, a client tool's result, a person's answer), if anything. */
  readonly wait: RunWait | undefined;
}

/**
 * The view of `steps` at `position` (default: the last step).
 *
 * @example
 * ```ts
 * const view = runViewAt(runSteps(events), scrubber);
 * view.timeline.length // iterations so far
 * ```
 */
export function runViewAt(steps: readonly RunStep[], position?: number): RunView {
  const index = steps.length === 0 ? -1 : Math.max(0, Math.min(position ?? steps.length - 1, steps.length - 1));
  const step = index >= 0 ? steps[index] : undefined;
  const envelope = step?.envelope ?? emptyEnvelope('');
  const events = steps.slice(0, index + 1).map((s) => s.event);
  return {
    index,
    step,
    previous: index > 0 ? steps[index - 1] : undefined,
    state: step?.state,
    envelope,
    timeline: envelope.observability.events,
    errors: runErrors(events),
    details: runDetailsOfSteps(steps.slice(0, index + 1)),
    wait: pendingWait(events),
  };
}

function errorOf(error: ErrorInfoData, event: AgentEvent, source: RunError['source'], tool?: string): RunError {
  const item: { -readonly [K in keyof RunError]: RunError[K] } = {
    code: error.code,
    message: error.message,
    iteration: event.iteration,
    source,
    seq: event.seq,
  };
  if (error.hint !== undefined) item.hint = error.hint;
  if (tool !== undefined) item.tool = tool;
  return item;
}

/** Every error in `events`: failed tool calls, and the outcome's error (invalid answer, iteration overflow, …). */
export function runErrors(events: readonly AgentEvent[]): RunError[] {
  const errors: RunError[] = [];
  for (const event of events) {
    if (event.type === AgentEventType.ToolCompleted && !event.data.ok && event.data.error) {
      errors.push(errorOf(event.data.error, event, 'tool', event.data.tool));
    } else if (event.type === AgentEventType.ToolDenied) {
      // A denied call is the model's observation, as a failed one: listed the same way.
      errors.push(errorOf(event.data.error, event, 'tool', event.data.tool));
    } else if ((event.type === AgentEventType.RunCompleted || event.type === AgentEventType.RunFailed) && event.data.outcome.error) {
      errors.push(errorOf(event.data.outcome.error, event, 'outcome'));
    }
  }
  return errors;
}

/** How a node is shown while a run is viewed. */
export type NodeActivity = 'active' | 'done' | 'failed';

/** The flow nodes the statechart is working with after `event`, as far as the editor shows them. */
export interface ActiveNodes {
  readonly [nodeId: string]: NodeActivity;
}

/** The least a node needs for the run highlights: its id, its flow type and its config's tool name. */
export interface HighlightNode {
  readonly id: string;
  readonly type: string;
  readonly toolName: string | undefined;
}

/**
 * Which nodes to highlight after `event`: the model while it is asked, the core while it judges
 * and decides, the tool while it runs, the outputs when the run is done, the core when it failed.
 */
export function activeNodesAfter(event: AgentEvent | undefined, nodes: readonly HighlightNode[]): ActiveNodes {
  if (event === undefined) return {};
  const ids = (match: (node: HighlightNode) => boolean): string[] => nodes.filter(match).map((node) => node.id);
  const mark = (list: string[], activity: NodeActivity): ActiveNodes => Object.fromEntries(list.map((id) => [id, activity]));
  switch (event.type) {
    case AgentEventType.ModelRequested:
      return mark(ids((n) => isModelType(n.type)), 'active');
    case AgentEventType.ToolRequested: {
      const tool = event.data.tool;
      return mark(ids((n) => isToolType(n.type) && (n.toolName ?? n.id) === tool), 'active');
    }
    case AgentEventType.RunCompleted:
      return { ...mark(ids((n) => isCoreType(n.type)), 'done'), ...mark(ids((n) => isOutputType(n.type)), 'done') };
    case AgentEventType.RunFailed:
      return mark(ids((n) => isCoreType(n.type)), 'failed');
    default:
      return mark(ids((n) => isCoreType(n.type)), 'active');
  }
}

/** The error code of each tool node whose last call failed, keyed by node id. */
export interface FailedTools {
  readonly [nodeId: string]: string;
}

/**
 * The tool nodes whose last call in `events` failed, with the failure's code: a later good call
 * of the same tool clears its mark, so the canvas shows where the run stands at that position.
 */
export function failedToolsAfter(events: readonly AgentEvent[], nodes: readonly HighlightNode[]): FailedTools {
  const lastError = new Map<string, string | undefined>();
  for (const event of events) {
    if (event.type === AgentEventType.ToolCompleted) lastError.set(event.data.tool, event.data.ok ? undefined : (event.data.error?.code ?? ErrorCode.TOOL_FAILED));
    else if (event.type === AgentEventType.ToolDenied) lastError.set(event.data.tool, event.data.error.code);
  }
  const failed: Record<string, string> = {};
  for (const node of nodes) {
    if (!isToolType(node.type)) continue;
    const code = lastError.get(node.toolName ?? node.id);
    if (code !== undefined) failed[node.id] = code;
  }
  return failed;
}

/** The three errors the Errors tab always lists, seen in this run or not. */
export const WATCHED_ERRORS: readonly { readonly title: string; readonly code: ErrorCode }[] = [
  { title: 'Invalid JSON', code: ErrorCode.INVALID_JSON },
  { title: 'Tool not allowed', code: ErrorCode.TOOL_NOT_ALLOWED },
  { title: 'Iteration overflow', code: ErrorCode.ITERATION_OVERFLOW },
];
