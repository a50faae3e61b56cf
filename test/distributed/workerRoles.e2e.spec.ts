import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from './clusterSupport.js';
import { killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// Each worker role builds only what it hosts, from one run plan: real `redflow worker` processes
// for the openai-agent example (a model.llm "openai" without a model name, the calculator as a
// tool.module), with the model's settings given to the model worker only, and a real HTTP server
// speaking the Chat Completions protocol as the model.

const FLOW = path.join(REPO_ROOT, 'examples', 'openai-agent', 'flow.json');
const prefix = uniquePrefix();
const cluster = ['--nats', NATS_URL, '--prefix', prefix];
const processes: RedflowProcess[] = [];
let nc: NatsConnection;
let model: FakeChatServer;
let dir: string;

const worker = (flowPath: string, role: string, env: Record<string, string> = {}) => {
  const started = startRedflow(['worker', flowPath, '--role', role, ...cluster], env);
  processes.push(started);
  return started;
};

beforeAll(async () => {
  nc = await connectTestServer('worker-roles');
  model = await startFakeChatCompletionsServer();
  model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-worker-roles-'));
});

afterAll(async () => {
  await killAll(processes);
  await removePrefix(nc, prefix);
  await nc.drain();
  await model.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('worker roles', () => {
  it('should serve its roles as NATS micro services, and plainly with --no-micro-services', async () => {
    const own = uniquePrefix();
    try {
      const micro = startRedflow(['worker', FLOW, '--role', 'core,tool', '--nats', NATS_URL, '--prefix', own]);
      const plain = startRedflow(['worker', FLOW, '--role', 'core,tool', '--nats', NATS_URL, '--prefix', own, '--no-micro-services']);
      processes.push(micro, plain);
      await Promise.all([micro.ready(), plain.ready()]);
      expect(micro.stderr()).toMatch(/NATS micro service redflow-tool \S+/);
      expect(micro.stderr()).toMatch(/NATS micro service redflow-core \S+/);
      expect(plain.stderr()).not.toContain('NATS micro service');
    } finally {
      await removePrefix(nc, own);
    }
  }, 60_000);

  it("should start core and tool workers without the model's settings, and run the flow with them", async () => {
    // No REDFLOW_MODEL, no OPENAI_* (the helper removes them): only the model worker gets them.
    const core = worker(FLOW, 'core');
    const tools = worker(FLOW, 'tool');
    const llm = worker(FLOW, 'model', { OPENAI_BASE_URL: model.baseUrl, REDFLOW_MODEL: 'test-model', OPENAI_API_KEY: 'sk-test' });
    await Promise.all([core.ready(), tools.ready(), llm.ready()]);
    model.enqueue(
      { kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'calculator', input: { operation: 'multiply', a: 12.5, b: 8 }, confidence: 0.8 }) },
      { kind: 'completion', content: JSON.stringify({ action: 'final', message: '12.5 * 8 = 100', confidence: 0.95 }) },
    );

    const run = await runCli(['run', FLOW, ...cluster, '--input', 'what is 12.5 * 8?', '--json'], { cwd: dir });
    expect(run.stderr).not.toMatch(/MODEL_CONFIG_INVALID/);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { outcome: { answer: string }; envelope: { tools: { history: { status: string }[] } } };
    expect(report.outcome.answer).toBe('12.5 * 8 = 100');
    expect(report.envelope.tools.history.map((call) => call.status)).toEqual(['succeeded']);
    expect(model.requests.map((request) => (request.body as { model: string }).model)).toEqual(['test-model', 'test-model']);
  }, 60_000);

  it("should start a model worker that cannot load the flow's tools (it builds none)", async () => {
    // The flow file alone, without its tools/ folder: the tool module is not there to import.
    const flowCopy = path.join(dir, 'flow.json');
    await cp(FLOW, flowCopy);
    const llm = worker(flowCopy, 'model', { REDFLOW_MODEL: 'test-model', OPENAI_BASE_URL: model.baseUrl });
    await llm.ready();
    expect(llm.stderr()).toContain(`${prefix}.model.model`);
    // …while a tool worker of that copy does need the module, and says so.
    const tools = worker(flowCopy, 'tool');
    const ending = await tools.ended;
    expect(ending.code, tools.stderr()).toBe(65);
    expect(tools.stderr()).toMatch(/TOOL_MODULE_INVALID/);
  }, 30_000);

  it('should refuse a model worker without OpenAI\'s key and a tool worker without DATABASE_URL (65), while core workers need neither', async () => {
    const postgresFlow = path.join(REPO_ROOT, 'examples', 'postgres-orders', 'flow.json');
    const cores = [worker(FLOW, 'core'), worker(postgresFlow, 'core', { DATABASE_URL: '' })];
    // A model name but no key, for OpenAI's API (no base URL): refused at start, no request.
    const llm = worker(FLOW, 'model', { REDFLOW_MODEL: 'test-model' });
    const database = worker(postgresFlow, 'tool', { DATABASE_URL: '' });
    await Promise.all(cores.map((core) => core.ready()));
    const [llmEnding, databaseEnding] = await Promise.all([llm.ended, database.ended]);
    expect(llmEnding.code, llm.stderr()).toBe(65);
    expect(llm.stderr()).toMatch(/MODEL_KEY_MISSING: .*\$OPENAI_API_KEY is not set/);
    expect(databaseEnding.code, database.stderr()).toBe(65);
    expect(database.stderr()).toMatch(/TOOL_CONFIG_INVALID: .*DATABASE_URL is not set/);
  }, 30_000);
});
