import { validators } from '../../contracts/schemas.js';
import { ErrorCode, errorInfo } from '../../errors.js';
import type { LogProblem } from '../eventStore.js';
import type { AgentEvent } from '../eventTypes.js';

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
