import type * as OtelApiModule from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { Headers } from '../actors/transport.js';
import { redactSecrets, redactSecretsInData } from '../secrets/secrets.js';
import type { Instruments } from './otelInstruments.js';
import { TelemetryAttribute } from './names.js';
import { TRACEPARENT_HEADER, parseTraceparent, runRootOf, type TraceParent } from './traceContext.js';

/** The OpenTelemetry API module, loaded when telemetry is turned on (never imported statically). */
export type OtelApi = typeof OtelApiModule;

/** What the spans of runs and calls are made with. */
export interface OtelParts {
  readonly api: OtelApi;
  readonly tracer: Tracer;
  readonly instruments: Instruments;
  /** Prompts, answers, tool inputs and outputs (redacted) go on spans only when true. */
  readonly captureContent: boolean;
}

/**
 * The context a span of run `traceId` starts in: the span the request's `traceparent` names
 * (the core's run span, when it came from a Redflow core), or else the run's logical root, so a
 * call from a client that sends no trace context still lands in its run's trace.
 */
export function parentContext(api: OtelApi, headers: Headers, traceId: string): Context {
  const parent = parseTraceparent(headers[TRACEPARENT_HEADER]) ?? runRootOf(traceId);
  return remoteContext(api, parent);
}

/** A context whose span is `parent`, from another process (or no process: a run's logical root). */
export function remoteContext(api: OtelApi, parent: TraceParent): Context {
  return api.trace.setSpanContext(api.ROOT_CONTEXT, { ...parent, isRemote: true });
}

/** The stable code of an error (a RedflowError's, an ErrorInfo's), or its class name. */
export function errorTypeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code } = error as { code?: unknown };
    if (typeof code === 'string' && code !== '') return code;
    if (error instanceof Error) return error.name;
  }
  // The conventions' value for an error of no known type.
  return '_OTHER';
}

/**
 * Marks `span` failed with `error`: status ERROR and `error.type` (its code), and an `exception`
 * event. The error's message goes on the span only with content capture on (redacted): a
 * message may quote what a model answered or a tool returned.
 */
export function recordFailure(parts: OtelParts, span: Span, error: unknown): string {
  const type = errorTypeOf(error);
  const message = typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message : undefined;
  const shown = parts.captureContent && message !== undefined ? redactSecrets(message) : undefined;
  span.setAttribute(TelemetryAttribute.ErrorType, type);
  span.addEvent('exception', { 'exception.type': type, ...(shown !== undefined && { 'exception.message': shown }) });
  span.setStatus({ code: parts.api.SpanStatusCode.ERROR, message: shown === undefined ? type : `${type}: ${shown}` });
  return type;
}

/** Content as a span attribute: JSON with every known secret cut out. */
export function contentAttribute(value: unknown): string {
  return JSON.stringify(redactSecretsInData(value)) ?? 'null';
}
