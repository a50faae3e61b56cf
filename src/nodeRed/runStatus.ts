import type { ToolProgress } from '../actors/tool.js';
import type { RunOutcome } from '../contracts/schema-types.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { stateAfter } from '../machines/runSteps.js';
import type { NodeStatus } from './nodeRedApi.js';

/** Node-RED shows about this much of a status before it gets hard to read. */
const MAX_STATUS_CHARS = 60;

/**
 * The status an agent shows while a run goes on: the statechart's state after the run's latest
 * event and the iteration (`awaitingTool · #2 lookup_order`), and how many runs are under way when
 * more than one is.
 *
 * @example
 * ```ts
 * runningStatus(event, 1) // { fill: 'blue', shape: 'dot', text: 'awaitingModel · #1' }
 * ```
 */
export function runningStatus(event: AgentEvent, runsUnderWay: number): NodeStatus {
  const tool = event.type === 'tool.requested' ? ` ${event.data.tool}` : '';
  const runs = runsUnderWay > 1 ? `${runsUnderWay} runs · ` : '';
  return { fill: 'blue', shape: 'dot', text: clip(`${runs}${stateAfter(event)} · #${event.iteration}${tool}`) };
}

/**
 * The status an agent shows while a tool call reports how far it is (`tool_progress`: an MCP
 * server's progress, a remote A2A task's status, a module tool's `context.progress`): the call
 * as {@link runningStatus} shows it, then a percentage when the tool gives a total (or its count
 * when not) and its message.
 *
 * @example
 * ```ts
 * toolProgressStatus('crawl', 2, { progress: 2, total: 5, message: 'page 2' }, 1).text // 'awaitingTool · #2 crawl: 40% page 2'
 * ```
 */
export function toolProgressStatus(tool: string, iteration: number, report: ToolProgress, runsUnderWay: number): NodeStatus {
  const { progress, total, message } = report;
  const count = typeof progress !== 'number' ? '' : typeof total === 'number' && total > 0 ? `${Math.round((progress / total) * 100)}%` : String(progress);
  const said = typeof message === 'string' ? message.replace(/\s+/g, ' ').trim() : '';
  const words = [count, said].filter((part) => part !== '').join(' ');
  const runs = runsUnderWay > 1 ? `${runsUnderWay} runs · ` : '';
  return { fill: 'blue', shape: 'dot', text: clip(`${runs}awaitingTool · #${iteration} ${tool}${words === '' ? '' : `: ${words}`}`) };
}

/**
 * The status an agent shows once a run has ended: green for `done`, a green ring for
 * `done_partial`, yellow for `escalate`, red with the error's code for `blocked`.
 */
export function endedStatus(outcome: RunOutcome, iterations: number): NodeStatus {
  const at = ` · #${iterations}`;
  switch (outcome.status) {
    case 'done':
      return { fill: 'green', shape: 'dot', text: `done${at}` };
    case 'done_partial':
      return { fill: 'green', shape: 'ring', text: `done_partial${at}` };
    case 'escalate':
      return { fill: 'yellow', shape: 'dot', text: `escalate${at}` };
    default:
      return { fill: 'red', shape: 'dot', text: clip(`blocked${at}: ${outcome.error?.code ?? outcome.reason}`) };
  }
}

/** A status saying what is wrong: red, ring (the node cannot run), the text clipped to fit. */
export function problemStatus(text: string): NodeStatus {
  return { fill: 'red', shape: 'ring', text: clip(text) };
}

function clip(text: string): string {
  return text.length <= MAX_STATUS_CHARS ? text : `${text.slice(0, MAX_STATUS_CHARS - 1)}…`;
}
