import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEnvelope, RunOutcome } from '../../src/contracts/schema-types.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { errorsOf, helper, loadFlow, nextMessage, statuses, withUserDir } from './nodeRedHarness.js';

type Outcome = { outcome: RunOutcome; envelope: AgentEnvelope; logPath: string; traceId: string };

const final = (message: string) => ({ action: 'final', message, confidence: 0.9 });

/** A flow tool the model never calls: an agent needs at least one tool. */
const noop: NodeRedNodeConfig = { id: 'noop', type: 'redflow-tool-in', name: 'noop', inputSchema: { type: 'object' }, wires: [[]] };

describe('the capability nodes an agent reaches through Node-RED messages', () => {
  let userDir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  describe('with local servers', () => {
    let model: FakeChatServer;
    let api: Server;
    let apiUrl: string;
    const apiRequests: { url: string; headers: IncomingHttpHeaders }[] = [];
    beforeEach(async () => {
      model = await startFakeChatCompletionsServer();
      apiRequests.length = 0;
      api = createServer((req, res) => {
        apiRequests.push({ url: req.url ?? '', headers: req.headers });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ city: 'Lyon', tempC: 21 }));
      });
      await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
      apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
      await model.stop();
      await new Promise((resolve) => api.close(resolve));
    });

    it('calls an OpenAI-compatible model and an http tool with the keys from the credentials store, and never logs them', async () => {
      const apiKey = 'sk-node-red-secret-4f9a1c';
      const token = 'Bearer weather-secret-77aa21';
      model.enqueue(
        { kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'weather', input: { city: 'Lyon' }, confidence: 0.6 }) },
        { kind: 'completion', content: JSON.stringify(final('21 °C in Lyon')) },
      );
      const flow: NodeRedNodeConfig[] = [
        { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['weather'], []] },
        { id: 'model', type: 'redflow-model', provider: 'openai-compatible', model: 'local-model', baseUrl: model.baseUrl, maxRetries: '0', wires: [] },
        {
          id: 'weather',
          type: 'redflow-tool-http',
          name: 'weather',
          description: 'the weather in a city',
          url: `${apiUrl}/weather?city={city}`,
          method: 'GET',
          idempotencyHeader: '',
          inputSchema: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
          timeoutMs: '',
          wires: [],
        },
        { id: 'answer', type: 'helper' },
      ];
      await loadFlow(userDir, flow, { model: { apiKey }, weather: { authorization: token } });
      const shown = statuses('model');
      const answered = nextMessage('answer');
      helper.getNode('agent')?.receive({ payload: 'weather in Lyon?' });
      const msg = await answered;
      const { outcome, logPath, traceId } = msg.redflow as Outcome;

      expect(outcome).toMatchObject({ status: 'done', answer: '21 °C in Lyon' });
      expect(model.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${apiKey}`, `Bearer ${apiKey}`]);
      expect(apiRequests).toHaveLength(1);
      expect(apiRequests[0]?.url).toBe('/weather?city=Lyon');
      expect(apiRequests[0]?.headers.authorization).toBe(token);
      expect(apiRequests[0]?.headers['idempotency-key']).toBe(`${traceId}:1`);
      const log = await readFile(logPath, 'utf8');
      expect(log).not.toContain(apiKey);
      expect(log).not.toContain('weather-secret-77aa21');
      expect(shown.texts).toContain('thinking');
      expect(shown.texts.some((text) => /^\d+ ms$/.test(text))).toBe(true);
    });

    it('refuses to start without the key OpenAI needs, with MODEL_KEY_MISSING', async () => {
      const saved = process.env.OPENAI_API_KEY;
      delete process.env.OPENAI_API_KEY;
      try {
        await loadFlow(userDir, [
          { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['noop'], []] },
          { id: 'model', type: 'redflow-model', provider: 'openai', model: 'gpt-4o-mini', wires: [] },
          noop,
          { id: 'answer', type: 'helper' },
        ]);
        const errors = errorsOf('agent');
        helper.getNode('agent')?.receive({ payload: 'hi' });
        await expect.poll(() => errors.join('\n')).toContain('MODEL_KEY_MISSING');
      } finally {
        if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
      }
    });
  });

  it('keeps a conversation named by msg.conversationId in the memory node', async () => {
    await loadFlow(userDir, [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 2, wires: [['answer'], ['model'], ['noop'], ['memory']] },
      noop,
      { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [final('first answer')], wires: [] },
      { id: 'memory', type: 'redflow-memory', store: 'file', path: 'memory', maxTurns: '5', wires: [] },
      { id: 'answer', type: 'helper' },
    ]);
    let answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'one', conversationId: 'c-1' });
    await answered;
    answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'two', conversationId: 'c-1' });
    const { envelope } = (await answered).redflow as Outcome;
    expect(envelope.memory).toMatchObject({ turns: [{ input: 'one', answer: 'first answer' }] });
    const stored = JSON.parse(await readFile(`${userDir}/memory/c-1.json`, 'utf8')) as { turns: unknown[] };
    expect(stored.turns).toHaveLength(2);
  });

  it('fails a flow tool whose body does not answer in time with TOOL_TIMEOUT, as an observation', async () => {
    await loadFlow(userDir, [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['slow'], []] },
      {
        id: 'model',
        type: 'redflow-model',
        provider: 'scripted',
        answers: [{ action: 'tool', tool: 'slow', input: {}, confidence: 0.5 }, final('it did not answer')],
        wires: [],
      },
      { id: 'slow', type: 'redflow-tool-in', name: 'slow', inputSchema: { type: 'object' }, timeoutMs: 50, wires: [['nowhere']] },
      { id: 'nowhere', type: 'helper' },
      { id: 'answer', type: 'helper' },
    ]);
    const toolErrors = errorsOf('slow');
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'go' });
    const { outcome, envelope } = (await answered).redflow as Outcome;
    expect(outcome.status).toBe('done');
    expect(envelope.tools.history[0]).toMatchObject({ status: 'failed', error: { code: 'TOOL_TIMEOUT' } });
    await expect.poll(() => toolErrors.join('\n')).toContain('TOOL_TIMEOUT');
  });

  it('fails a flow tool whose body carries msg.error with TOOL_FAILED', async () => {
    await loadFlow(userDir, [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['broken'], []] },
      { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [{ action: 'tool', tool: 'broken', input: {}, confidence: 0.5 }, final('noted')], wires: [] },
      { id: 'broken', type: 'redflow-tool-in', name: 'broken', inputSchema: { type: 'object' }, wires: [['body']] },
      { id: 'body', type: 'helper' },
      { id: 'broken-out', type: 'redflow-tool-out', wires: [] },
      { id: 'answer', type: 'helper' },
    ]);
    helper.getNode('body')?.on('input', (msg: Record<string, unknown>) => {
      msg.error = { message: 'the database is down' };
      helper.getNode('broken-out')?.receive(msg);
    });
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'go' });
    const { envelope } = (await answered).redflow as Outcome;
    expect(envelope.tools.history[0]).toMatchObject({ status: 'failed', error: { code: 'TOOL_FAILED', message: 'tool "broken" failed: the database is down' } });
  });

  it('refuses messages that do not come from an agent, on a capability and on a tool out', async () => {
    await loadFlow(userDir, [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 1, wires: [[], ['model'], ['noop'], []] },
      { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [final('x')], wires: [] },
      noop,
      { id: 'out', type: 'redflow-tool-out', wires: [] },
    ]);
    const modelErrors = errorsOf('model');
    const outErrors = errorsOf('out');
    helper.getNode('model')?.receive({ payload: 'hello', redflow: { request: 'made-up', subject: 'redflow.model.model' } });
    helper.getNode('out')?.receive({ payload: 'stray' });
    await expect.poll(() => modelErrors.join('\n')).toContain('TRANSPORT_BAD_MESSAGE');
    await expect.poll(() => outErrors.join('\n')).toContain('TRANSPORT_BAD_MESSAGE');
  });

  it('marks a capability wired to no agent with CAPABILITY_NOT_CONNECTED', async () => {
    await loadFlow(userDir, [{ id: 'lonely', type: 'redflow-tool-http', name: 'x', url: 'http://127.0.0.1:1/x', wires: [] }]);
    const node = helper.getNode('lonely') as unknown as { status: { args: [{ text?: string }][] } };
    expect(node.status.args[0]?.[0].text).toMatch(/^CAPABILITY_NOT_CONNECTED/);
  });

  it('checks the input against the input node\'s inputSchema and formats the answer in the response node', async () => {
    await loadFlow(userDir, [
      { id: 'in', type: 'redflow-input', inputSchema: { type: 'object', required: ['question'] }, wires: [['agent']] },
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 1, wires: [['reply', 'end'], ['model'], ['noop'], []] },
      noop,
      { id: 'end', type: 'redflow-end', wires: [] },
      { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [final('42')], wires: [] },
      { id: 'reply', type: 'redflow-response', format: 'json', wires: [['answer']] },
      { id: 'answer', type: 'helper' },
    ]);
    const errors = errorsOf('agent');
    helper.getNode('in')?.receive({ payload: 'not an object' });
    await expect.poll(() => errors.join('\n')).toContain('RUN_INPUT_INVALID');
    const ended = statuses('end');
    let endSent = 0;
    helper.getNode('end')?.on('call:send', () => (endSent += 1));
    const answered = nextMessage('answer');
    helper.getNode('in')?.receive({ payload: { question: 'the answer?' } });
    expect((await answered).payload).toMatchObject({ status: 'done', answer: '42' });
    // The end node takes the answer and sends nothing on.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(endSent).toBe(0);
    expect(ended.texts).toEqual([]);
  });

  it('shows every event in the debug sidebar when the agent has debug on', async () => {
    const { events } = createRequire(import.meta.url)('@node-red/util') as { events: { on(e: string, l: (m: { topic: string; data: { id: string; topic: string } }) => void): void; removeAllListeners(e: string): void } };
    const published: { id: string; topic: string }[] = [];
    events.on('comms', (message) => {
      if (message.topic === 'debug') published.push(message.data);
    });
    try {
      await loadFlow(userDir, [
        { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 1, debug: true, wires: [['answer'], ['model'], ['noop'], []] },
        noop,
        { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [final('seen')], wires: [] },
        { id: 'answer', type: 'helper' },
      ]);
      const answered = nextMessage('answer');
      helper.getNode('agent')?.receive({ payload: 'hi' });
      await answered;
      await expect.poll(() => published.map((entry) => entry.topic)).toEqual(['run.started #0', 'model.requested #1', 'model.answered #1', 'run.completed #1']);
      expect(published.every((entry) => entry.id === 'agent')).toBe(true);
    } finally {
      events.removeAllListeners('comms');
    }
  });

  it('answers the editor: the deployed agent\'s runs, and a wiring checked before it is deployed', async () => {
    await loadFlow(userDir, [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 1, wires: [['answer'], ['model'], ['noop'], []] },
      { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [final('listed')], wires: [] },
      noop,
      { id: 'answer', type: 'helper' },
    ]);
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'hi' });
    const { traceId, logPath } = (await answered).redflow as Outcome;
    const described = (await helper.request().get('/redflow/agents/agent').expect(200)).body as {
      errors: unknown[];
      runs: { traceId: string; status: string; timeline: { action?: string }[]; logPath: string }[];
    };
    expect(described.errors).toEqual([]);
    expect(described.runs).toEqual([expect.objectContaining({ traceId, status: 'finished', logPath, timeline: [expect.objectContaining({ action: 'final' })] })]);
    await helper.request().get('/redflow/agents/nobody').expect(404);

    const checked = (await helper
      .request()
      .post('/redflow/validate')
      .send({ agent: 'a', nodes: [{ id: 'a', type: 'redflow-agent', name: 'Helper', wires: [[], [], [], []] }] })
      .expect(200)).body as { ok: boolean; errors: { code: string; message: string }[] };
    expect(checked.ok).toBe(false);
    expect(checked.errors.map((error) => error.code)).toContain('NO_MODEL');
    expect(checked.errors.find((error) => error.code === 'NO_MODEL')?.message).toContain("'Helper'");
    await helper.request().post('/redflow/validate').send({ nodes: 'x' }).expect(400);
    expect((await readJsonlLog(logPath)).events.length).toBeGreaterThan(0);
  });
});
