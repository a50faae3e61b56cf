import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTraceparent, otelTraceIdOf, parseTraceparent, rootSpanIdOf } from '../../src/telemetry/traceContext.js';

const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length }).filter((id) => !/^0+$/.test(id));

describe('trace context', () => {
  it('should derive one valid OpenTelemetry trace id and root span id per run trace id, the same every time', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,128}$/), (traceId) => {
        expect(otelTraceIdOf(traceId)).toMatch(/^[0-9a-f]{32}$/);
        expect(otelTraceIdOf(traceId)).not.toMatch(/^0+$/);
        expect(rootSpanIdOf(traceId)).toMatch(/^[0-9a-f]{16}$/);
        expect(otelTraceIdOf(traceId)).toBe(otelTraceIdOf(`${traceId}`));
      }),
    );
    expect(otelTraceIdOf('run-1')).not.toBe(otelTraceIdOf('run-2'));
  });

  it('should read back every traceparent it writes', () => {
    fc.assert(
      fc.property(hex(32), hex(16), fc.integer({ min: 0, max: 255 }), (traceId, spanId, traceFlags) => {
        expect(parseTraceparent(formatTraceparent({ traceId, spanId, traceFlags }))).toEqual({ traceId, spanId, traceFlags });
      }),
    );
  });

  it('should ignore a traceparent that is not a valid one, whatever it holds', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(() => parseTraceparent(value)).not.toThrow();
      }),
    );
    const id = '0af7651916cd43dd8448eb211c80319c';
    const span = 'b7ad6b7169203331';
    expect(parseTraceparent(`00-${id}-${span}-01`)).toEqual({ traceId: id, spanId: span, traceFlags: 1 });
    // A later version may carry more fields; version 00 may not.
    expect(parseTraceparent(`01-${id}-${span}-01-more`)).toEqual({ traceId: id, spanId: span, traceFlags: 1 });
    for (const bad of [
      `00-${id}-${span}-01-more`,
      `ff-${id}-${span}-01`,
      `00-${'0'.repeat(32)}-${span}-01`,
      `00-${id}-${'0'.repeat(16)}-01`,
      `00-${id.toUpperCase()}-${span}-01`,
      `00-${id}-${span}`,
      '',
      42,
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
  });
});
