import type { AgentEvent } from '../events/eventTypes.js';

const decoder = new TextDecoder();

/**
 * An event as published on a trace subject, or `undefined` for a message that is not JSON (a
 * trace subject is open to anyone the server lets publish there).
 */
export function parseTraceEvent(data: Uint8Array): AgentEvent | undefined {
  try {
    return JSON.parse(decoder.decode(data)) as AgentEvent;
  } catch {
    return undefined;
  }
}
