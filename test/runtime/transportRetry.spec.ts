import { describe, expect, it } from 'vitest';
import { ErrorCode, errorInfo } from '../../src/errors.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import type { Reply, Transport } from '../../src/actors/transport.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

/** Wraps a transport so that the first request on each matching subject fails with `error`. */
function failingOnce(inner: Transport, matches: (subject: string) => boolean, error: ReturnType<typeof errorInfo>) {
  const seen: { subject: string; key: string | undefined }[] = [];
  const failed = new Set<string>();
  const transport: Transport = {
    ...inner,
    request<Req, Res>(subject: string, data: Req, options: Parameters<Transport['request']>[2]): Promise<Reply<Res>> {
      seen.push({ subject, key: options.headers?.['Redflow-Idempotency-Key'] });
      if (matches(subject) && !failed.has(subject)) {
        failed.add(subject);
        return Promise.resolve({ ok: false, error });
      }
      return inner.request<Req, Res>(subject, data, options);
    },
  };
  return { transport, seen };
}

describe('re-sending requests that fail in delivery', () => {
  it('should re-send a tool request whose delivery failed, with the same idempotency key, and finish', async () => {
    const echo = countingTool();
    const actors = serveActors({ model: createScriptedModel([answer.tool('echo', { text: 'a' }), answer.final('ok')]), tools: [echo.tool] });
    const { transport, seen } = failingOnce(actors.transport, (s) => s.includes('.tool.'), errorInfo(ErrorCode.TRANSPORT_TIMEOUT, 'lost', { retryable: true }));
    const run = startRun({ ...actors, transport, agent: agentConfig(), store: createMemoryEventStore(), input: 'x', attemptTimeoutMs: 1000 });
    const { outcome, envelope } = await run.result;
    expect(outcome.reason).toBe('final_answer');
    expect(envelope.tools.history[0]?.status).toBe('succeeded');
    const toolRequests = seen.filter((r) => r.subject.includes('.tool.'));
    expect(toolRequests).toHaveLength(2);
    expect(toolRequests[0]?.key).toBe(toolRequests[1]?.key);
    expect(echo.calls).toHaveLength(1);
    await actors.close();
  });

  it("should not re-send a request that reached the actor and failed there (the actor's own retries decide)", async () => {
    const actors = serveActors({ model: createScriptedModel([answer.final('never')]), tools: [countingTool().tool] });
    const { transport, seen } = failingOnce(actors.transport, (s) => s.includes('.model.'), errorInfo(ErrorCode.MODEL_SERVER_ERROR, 'HTTP 500', { retryable: true }));
    const { outcome } = await startRun({ ...actors, transport, agent: agentConfig(), store: createMemoryEventStore(), input: 'x', attemptTimeoutMs: 1000 }).result;
    expect(outcome).toMatchObject({ reason: 'model_error', error: { code: ErrorCode.MODEL_SERVER_ERROR } });
    expect(seen.filter((r) => r.subject.includes('.model.'))).toHaveLength(1);
    await actors.close();
  });

  it('should fail at once in one process when no actor serves the tool', async () => {
    const actors = serveActors({ model: createScriptedModel([answer.tool('ghost'), answer.final('ok')]), tools: [] });
    const started = Date.now();
    const { outcome, envelope } = await startRun({
      ...actors,
      tools: [{ name: 'ghost', description: 'not served', inputSchema: { type: 'object' } }],
      agent: agentConfig({ allowedTools: ['ghost'] }),
      store: createMemoryEventStore(),
      input: 'x',
    }).result;
    expect(Date.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    expect(outcome.reason).toBe('final_answer');
    expect(envelope.tools.history[0]?.error?.code).toBe(ErrorCode.TRANSPORT_NO_RESPONDER);
    await actors.close();
  });
});
