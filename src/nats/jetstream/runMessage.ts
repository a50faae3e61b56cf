import { validators } from '../../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { LogProblem } from '../../events/eventStore.js';
import type { AgentEvent } from '../../events/eventTypes.js';
import { createRunPathCheck } from '../../events/runPath.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The events of one message of a run's trace subjects, checked whole: a message holds one event,
 * as JSON, or several consecutive events of the run, as a JSON array (see the store's
 * `appendMany`). Each must be an event of the schema, of run `traceId`, the first at `expectedSeq`
 * and the others after it; otherwise the problem, at `position` (the message's place among the
 * run's messages), that stops reading the run there.
 */
export function decodeRunMessage(data: Uint8Array, traceId: string, expectedSeq: number, position: number): { readonly events: readonly AgentEvent[] } | { readonly problem: LogProblem } {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (error) {
    return { problem: runProblem(ErrorCode.LOG_RECORD_CORRUPT, position, `record ${position} is not JSON: ${(error as Error).message}`) };
  }
  const items: unknown[] = Array.isArray(value) ? value : [value];
  if (items.length === 0) return { problem: runProblem(ErrorCode.LOG_RECORD_CORRUPT, position, `record ${position} is an empty list`) };
  for (const [i, item] of items.entries()) {
    if (!validators.agentEvent(item)) {
      return { problem: runProblem(ErrorCode.LOG_RECORD_CORRUPT, position, `record ${position} is not an event of agent-event.schema.json${items.length > 1 ? ` (its event ${i + 1})` : ''}`) };
    }
    const event = item as unknown as AgentEvent;
    if (event.traceId !== traceId) {
      return { problem: runProblem(ErrorCode.LOG_RECORD_CORRUPT, position, `record ${position} belongs to run ${event.traceId}`) };
    }
    if (event.seq !== expectedSeq + i) {
      return { problem: runProblem(ErrorCode.LOG_SEQUENCE_GAP, position, `record ${position} has seq ${event.seq}; expected ${expectedSeq + i}`) };
    }
  }
  return { events: items as AgentEvent[] };
}

/** A problem of a run's log in the stream: nothing from its record on is folded. */
export function runProblem(code: ErrorCode, position: number, message: string): LogProblem {
  return { ...errorInfo(code, message, { hint: 'nothing from this record on is folded' }), position };
}

/**
 * Reads run `traceId`'s messages in the stream's order, from its first, as a follow gets them:
 * each call gives one message's events, checked by {@link decodeRunMessage} and as steps the run
 * could take (a message is written whole: one impossible event refuses it all).
 *
 * @throws RedflowError the message's problem (`LOG_RECORD_CORRUPT`, `LOG_SEQUENCE_GAP`, `LOG_PATH_INVALID`).
 */
export function createRunMessageReader(traceId: string): (data: Uint8Array) => readonly AgentEvent[] {
  const runPath = createRunPathCheck();
  let position = 0;
  let lastSeq = 0;
  return (data) => {
    position++;
    const verdict = decodeRunMessage(data, traceId, lastSeq + 1, position);
    if ('problem' in verdict) throw new RedflowError(verdict.problem);
    for (const event of verdict.events) {
      const impossible = runPath.next(event);
      if (impossible !== undefined) throw new RedflowError(runProblem(ErrorCode.LOG_PATH_INVALID, position, `not a step the run could take: ${impossible}`));
    }
    lastSeq = verdict.events.at(-1)?.seq ?? lastSeq;
    return verdict.events;
  };
}
