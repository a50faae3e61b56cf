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
