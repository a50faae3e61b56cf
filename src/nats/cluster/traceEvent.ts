import type { AgentEvent } from '../../events/eventTypes.js';

const decoder = new TextDecoder();

/**
 * The events of a message on a trace subject (one event) or a log subject of the trace stream (one
 * event, or several consecutive events of one run stored together: a JSON array, see the
 * JetStream event store's `appendMany`); `undefined` for a message that is neither (the subjects
 * are open to anyone the server lets publish there).
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
