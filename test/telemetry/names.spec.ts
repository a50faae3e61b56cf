import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { GenAiOperation, TelemetryAttribute, TelemetryMetric } from '../../src/telemetry/names.js';

// Redflow writes the GenAI semantic conventions' names itself (the incubating entry point is not
// for use at run time); each must be the conventions' own.

describe('telemetry names', () => {
  it("should spell every gen_ai and error attribute as the semantic conventions do", () => {
    const known = new Set(Object.entries(semconv).filter(([name]) => name.startsWith('ATTR_')).map(([, value]) => value as string));
    const ours = Object.values(TelemetryAttribute).filter((name) => !name.startsWith('redflow.'));
    expect(ours.length).toBeGreaterThan(10);
    for (const name of ours) expect(known, name).toContain(name);
  });

  it('should spell the GenAI metrics and operation names as the semantic conventions do', () => {
    expect(TelemetryMetric.TokenUsage).toBe(semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE);
    expect(TelemetryMetric.OperationDuration).toBe(semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION);
    expect(GenAiOperation).toEqual({
      InvokeAgent: semconv.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      Chat: semconv.GEN_AI_OPERATION_NAME_VALUE_CHAT,
      ExecuteTool: semconv.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    });
  });
});
