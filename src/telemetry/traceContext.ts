import { createHash } from 'node:crypto';

/** The W3C trace context of a span: what the `traceparent` header carries. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** The trace flags; bit 0 is `sampled`. */
  readonly traceFlags: number;
}

/** The header that carries a span's context from one process to the next (W3C Trace Context). */
export const TRACEPARENT_HEADER = 'traceparent';

/**
 * The OpenTelemetry trace id of a run: the first 128 bits of SHA-256 over its trace id. Every
 * process that works on the run (the core worker that starts it, the one that takes it over after
 * a crash, the one that resumes it with an approval) computes the same id from the run's trace id
 * alone, so all of them add to one trace without passing anything along.
 *
 * @example
 * ```ts
 * otelTraceIdOf('mb3k1x2a-9f8e7d6c5b4a'); // 32 hex digits, the same in every process
 * ```
 */
export function otelTraceIdOf(traceId: string): string {
  return digestOf(traceId).slice(0, 32);
}

/**
 * The span id every stretch of a run hangs below: the run's logical root. No process records a
 * span with this id (none can choose its span ids); it is what makes the stretches of one run
 * siblings in one trace.
 */
export function rootSpanIdOf(traceId: string): string {
  return digestOf(traceId).slice(32, 48);
}

/** The context that a run's spans descend from when no span is handed over (see {@link otelTraceIdOf}). */
export function runRootOf(traceId: string): TraceParent {
  return { traceId: otelTraceIdOf(traceId), spanId: rootSpanIdOf(traceId), traceFlags: 1 };
}

function digestOf(traceId: string): string {
  const digest = createHash('sha256').update(`redflow.trace:${traceId}`).digest('hex');
  // A digest of all zeros would be an invalid id: 2^-128, but the ids must be valid.
  return /^0+$/.test(digest.slice(0, 32)) || /^0+$/.test(digest.slice(32, 48)) ? createHash('sha256').update(digest).digest('hex') : digest;
}

/**
 * The `traceparent` header value of a span (version 00). Written here rather than through the
 * propagator the process configured: this header is how Redflow's own processes join one trace,
 * whatever else the operator propagates, and its format is fixed by the W3C recommendation.
 */
export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Reads a `traceparent` header value, or `undefined` for anything that is not a valid one (a
 * malformed value is ignored, as the recommendation says: the receiver starts afresh).
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length > 512) return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  // Version ff is forbidden; version 00 has exactly four fields; later versions may add more.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}
