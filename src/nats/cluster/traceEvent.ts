import type { AgentEvent } from '../../events/eventTypes.js';

const decoder = new TextDecoder();

/**
 * The events of a message on a trace subject: one event, or several consecutive events of one run
 * stored in one message (a JSON array, see the JetStream event store's `appendMany`); `undefined`
 * for a message that is neither (a trace subject is open to anyone the server lets publish there).
 * The events are as sent: callers check what they rely on (`validators.agentEvent`, the trace id).
 */
export function parseTraceEvents(data: Uint8Array): readonly AgentEvent[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) return value.every(isObject) ? (value as AgentEvent[]) : undefined;
  return isObject(value) ? [value as AgentEvent] : undefined;
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
