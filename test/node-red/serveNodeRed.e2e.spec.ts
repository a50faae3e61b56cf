/**
 * `redflow serve --node-red`: Redflow's API and editor on the flows of a real Node-RED process (both
 * packages packed and installed into a fresh user directory, adminAuth on), and the repository's
 * canonical graph (examples/graph-format) run in Node-RED and in Redflow's own runtime with the same
 * model answers: the same outcome, the same requests to the model, and two logs `redflow replay` reads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import { nodeRedAdmin, type NodeRedAdmin } from '../../src/server/nodeRed/nodeRedAdmin.js';
import { nodeRedFlowStore } from '../../src/server/nodeRed/nodeRedFlowStore.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser } from '../editor/browserHarness.js';
import { runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { ROOT, freePort, nodeRedInstalls, startNodeRed, userDirWithRedflow, type NodeRedProcess } from './nodeRedProcess.js';

const require = createRequire(import.meta.url);
const bcrypt = require('bcryptjs') as { hashSync(password: string, rounds: number): string };

const PASSWORD = 'redflow-e2e-password';
/** The Node-RED example's tab: a flow made in Node-RED, with flow tools and a scripted model. */
const TAB = '7f3a0c1d5e2b4a69';
const MODEL_KEY = 'sk-e2e-node-red';

type Node = Record<string, unknown> & { id: string; type: string; z?: string; wires?: string[][] };

let nodeRed: NodeRedProcess;
let userDir: string;
let token: string;
let model: FakeChatServer;
let serve: ChildProcess | undefined;
let api: string;
let tracking: Server;
let trackingUrl: string;
/** Calls the approvals flow's http tool made. */
let trackingCalls = 0;

/** A token of Node-RED's adminAuth, as `node-red-admin login` gets one. */
async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', scope: '*', username: 'admin', password: PASSWORD }),
  });
  if (!response.ok) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** Node-RED's flows as its Admin API gives them (the truth, not what Redflow says). */
async function nodeRedFlows(): Promise<Node[]> {
  const response = await fetch(`${nodeRed.url}/flows`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET /flows: ${response.status}`);
  return (await response.json()) as Node[];
}

/** `redflow serve` with `args`, resolving with its URL once it prints one (or its exit, when it exits first). */
function startServe(args: readonly string[]): Promise<{ url?: string; code?: number | null; output: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/redflow.js'), 'serve', '--port', '0', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let output = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ output: `no URL within 15 s:\n${output}`, child }), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+\//.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve({ url: found[0].slice(0, -1), output, child });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, child });
    });
  });
}

async function call<T>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${api}${route}`, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** The run's events as the API's stream gives them, until its end (or its park in a wait, with `until`). */
async function stream(traceId: string, until?: (events: readonly AgentEvent[]) => boolean): Promise<{ events: AgentEvent[]; end?: RunResponse }> {
  const controller = new AbortController();
  const response = await fetch(`${api}/api/runs/${traceId}/stream`, { signal: controller.signal });
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error('no stream');
  const events: AgentEvent[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { events };
    buffer += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const kind = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      if (kind === 'end') {
        controller.abort();
        return { events, end: JSON.parse(data) as RunResponse };
      }
      events.push(JSON.parse(data) as AgentEvent);
      if (until?.(events)) {
        controller.abort();
        return { events };
      }
    }
  }
}

const example = (name: string) => JSON.parse(readFileSync(path.join(ROOT, 'examples', name, 'flow.json'), 'utf8')) as FlowDefinition;

beforeAll(async () => {
  model = await startFakeChatCompletionsServer();
  tracking = createServer((_req, res) => {
    trackingCalls += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ location: 'Lyon sorting centre' }));
  });
  await new Promise<void>((resolve) => tracking.listen(0, '127.0.0.1', resolve));
  trackingUrl = `http://127.0.0.1:${(tracking.address() as AddressInfo).port}`;
  userDir = await userDirWithRedflow();
  // The newest Node-RED the run has: 4.1 in `npm test`, 5 in CI's Node 22 and 24 passes (REDFLOW_NODE_RED_5).
  const install = nodeRedInstalls().at(-1);
  if (install === undefined) throw new Error('no Node-RED to run');
  nodeRed = await startNodeRed(install, userDir, await freePort(), { fsync: 'never' }, {
    settings: { adminAuth: { type: 'credentials', users: [{ username: 'admin', password: bcrypt.hashSync(PASSWORD, 8), permissions: '*' }] } },
    // What every model.llm of an openai provider reads, in Node-RED as in `redflow run` below.
    env: { OPENAI_API_KEY: MODEL_KEY, OPENAI_BASE_URL: model.baseUrl },
  });
  token = await login(nodeRed.url);
  // A flow made in Node-RED: the package's example, on its tab.
  const exampleFlows = JSON.parse(readFileSync(path.join(ROOT, 'node-red/examples/order-status.json'), 'utf8')) as Node[];
  const deployed = await fetch(`${nodeRed.url}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'node-red-deployment-type': 'full' },
    body: JSON.stringify([{ id: TAB, type: 'tab', label: 'Order status', disabled: false, info: '' }, ...exampleFlows]),
  });
  if (!deployed.ok) throw new Error(`deploy: ${deployed.status} ${await deployed.text()}`);
  const started = await startServe(['--node-red', nodeRed.url, '--node-red-token', token]);
  if (started.url === undefined) throw new Error(`redflow serve --node-red did not start:\n${started.output}`);
  serve = started.child;
  api = started.url;
}, 120_000);

afterAll(async () => {
  serve?.kill('SIGTERM');
  await nodeRed?.kill();
  await model?.stop();
  tracking?.closeAllConnections();
  await new Promise((resolve) => tracking?.close(resolve));
  if (userDir !== undefined) await rm(path.dirname(userDir), { recursive: true, force: true });
});

describe('redflow serve --node-red on a real Node-RED (adminAuth on)', () => {
  it('refuses to start without Node-RED\'s token (64) or without Node-RED (69), saying why', async () => {
    const refused = await startServe(['--node-red', nodeRed.url]);
    expect(refused.code, refused.output).toBe(64);
    expect(refused.output).toContain('error NODE_RED_UNAUTHORIZED');
    expect(refused.output).toContain('--node-red-token');
    const gone = await startServe(['--node-red', `http://127.0.0.1:${await freePort()}`, '--node-red-token', token]);
    expect(gone.code, gone.output).toBe(69);
    expect(gone.output).toContain('error NODE_RED_UNREACHABLE');
    expect(gone.output).not.toContain(token);
  }, 30_000);

  it('lists and opens the flow made in Node-RED, saves a change into it (Node-RED\'s own nodes kept), and runs it there, followed live', async () => {
    const { body: list } = await call<{ flows: { id: string; name: string; valid: boolean; updatedAt: string }[] }>('GET', '/api/flows');
    // Never saved from Redflow's editor: Redflow cannot tell when it changed.
    expect(list.flows).toEqual([{ id: TAB, name: 'Order status', valid: true, updatedAt: '1970-01-01T00:00:00.000Z' }]);
    const { body: flow } = await call<FlowDefinition>('GET', `/api/flows/${TAB}`);
    expect(flow.nodes.map((node) => node.type).sort()).toEqual(['agent.core', 'memory.kv', 'model.llm', 'response.chat', 'tool.flow', 'tool.flow', 'trigger.input']);

    const before = await nodeRedFlows();
    const agent = flow.nodes.find((node) => node.type === 'agent.core');
    if (agent?.config === undefined) throw new Error('no agent');
    agent.config.instructions = 'Answer in one sentence.';
    const saved = await call<{ validation: { ok: boolean } }>('PUT', `/api/flows/${TAB}`, flow);
    expect(saved.status).toBe(200);
    expect(saved.body.validation.ok).toBe(true);
    const after = await nodeRedFlows();
    expect(after.find((node) => node.id === agent.id)?.instructions).toBe('Answer in one sentence.');
    // Everything else is as Node-RED had it: the inject, the debug, the tool bodies, every other property.
    const others = (nodes: Node[]) => nodes.filter((node) => node.id !== agent.id && node.type !== 'tab');
    expect(others(after)).toEqual(others(before));
    expect((await call<FlowDefinition>('GET', `/api/flows/${TAB}`)).body).toEqual(flow);
    const listed = (await call<{ flows: { updatedAt: string }[] }>('GET', '/api/flows')).body.flows[0];
    expect(Date.parse(listed?.updatedAt ?? '')).toBeGreaterThan(Date.now() - 60_000);

    const started = await call<{ traceId: string; flow: string }>('POST', '/api/runs', { flow: TAB, input: 'Where is order A-1001?', conversationId: 'e2e' });
    expect(started.status).toBe(201);
    const { events, end } = await stream(started.body.traceId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(events.filter((event) => event.type === 'tool.completed').map((event) => event.type === 'tool.completed' && [event.data.tool, event.data.ok])).toEqual([
      ['lookup_order', true],
      ['track_shipment', true],
    ]);
    expect(end).toMatchObject({ status: 'finished', flow: TAB, outcome: { status: 'done', answer: expect.stringContaining('Order A-1001 shipped with FastShip') } });
    expect(events[0]?.data).toMatchObject({ agent: { instructions: 'Answer in one sentence.' } });
    const { body: runs } = await call<{ runs: { traceId: string; flow: string }[] }>('GET', `/api/runs?flow=${TAB}`);
    expect(runs.runs[0]).toMatchObject({ traceId: started.body.traceId, flow: TAB });
    expect((await call<RunResponse>('GET', `/api/runs/${started.body.traceId}`)).body.envelope.tools.history.map((call) => call.tool)).toEqual(['lookup_order', 'track_shipment']);
  }, 30_000);

  it('creates a flow in Node-RED, runs it until it waits for an approval, approves it from the API, and deletes the flow', async () => {
    const doc: FlowDefinition = {
      id: 'approvals',
      version: 1,
      name: 'Approvals',
      nodes: [
        { id: 'approver', type: 'agent.core', position: { x: 300, y: 100 }, config: { strategy: 'react', maxIterations: 3, requiresApproval: ['track'] } },
        {
          id: 'approver_model',
          type: 'model.llm',
          position: { x: 300, y: 0 },
          config: {
            provider: 'scripted',
            answers: [
              { action: 'tool', tool: 'track', input: { code: 'FS-1' }, confidence: 0.6 },
              { action: 'final', message: 'It is in Lyon.', confidence: 0.9 },
            ],
          },
        },
        { id: 'track', type: 'tool.http', position: { x: 300, y: 200 }, config: { url: `${trackingUrl}/track/{code}`, inputSchema: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } } },
      ],
      edges: [
        { id: 'm', source: 'approver', target: 'approver_model', kind: 'model' },
        { id: 't', source: 'approver', target: 'track', kind: 'tool' },
      ],
    };
    const created = await call('PUT', '/api/flows/approvals', doc);
    expect(created.status).toBe(201);
    expect((await nodeRedFlows()).find((node) => node.id === 'approvals')).toMatchObject({ type: 'tab', label: 'Approvals' });
    expect((await call<FlowDefinition>('GET', '/api/flows/approvals')).body).toEqual(doc);

    const { body: started } = await call<{ traceId: string }>('POST', '/api/runs', { flow: 'approvals', input: 'where is FS-1?' });
    const parked = await stream(started.traceId, (events) => events.at(-1)?.type === 'tool.requested');
    expect(parked.events.at(-1)).toMatchObject({ type: 'tool.requested', data: { tool: 'track' } });
    await expect.poll(async () => (await call<RunResponse>('GET', `/api/runs/${started.traceId}`)).body.status).toBe('waiting');
    const waiting = (await call<RunResponse>('GET', `/api/runs/${started.traceId}`)).body.waiting;
    const approved = await call<RunResponse>('POST', `/api/runs/${started.traceId}/approval`, { decision: 'approve', idempotencyKey: waiting?.idempotencyKey });
    expect(approved.status).toBe(202);
    const { end } = await stream(started.traceId);
    expect(end?.outcome).toMatchObject({ status: 'done', answer: 'It is in Lyon.' });
    expect(end?.envelope.tools.history[0]).toMatchObject({ tool: 'track', output: { status: 200, body: { location: 'Lyon sorting centre' } } });
    const again = await call<{ error: { code: string } }>('POST', `/api/runs/${started.traceId}/approval`, { decision: 'approve' });
    expect(again.status).toBe(409);

    // Parked again, then aborted from the API: it ends without the call it waited on.
    model.reset();
    const { body: second } = await call<{ traceId: string }>('POST', '/api/runs', { flow: 'approvals', input: 'and FS-2?' });
    await expect.poll(async () => (await call<RunResponse>('GET', `/api/runs/${second.traceId}`)).body.status).toBe('waiting');
    expect((await call('POST', `/api/runs/${second.traceId}/abort`, { reason: 'not now' })).status).toBe(202);
    const aborted = await stream(second.traceId);
    expect(aborted.end?.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    expect(aborted.events.some((event) => event.type === 'tool.completed')).toBe(false);
    expect(trackingCalls).toBe(1);

    // What an agent in Node-RED cannot have is said on validation; a tab's id has no folders.
    const withClient: FlowDefinition = { ...doc, nodes: [...doc.nodes, { id: 'ask', type: 'tool.client', config: { description: 'asks' } }], edges: [...doc.edges, { id: 'a', source: 'approver', target: 'ask' }] };
    const validated = await call<{ ok: boolean; errors: { code: string; nodeId: string }[] }>('POST', '/api/validate', withClient);
    expect(validated.body.errors).toEqual([expect.objectContaining({ code: 'NODE_RED_NODE_UNSUPPORTED', nodeId: 'ask' })]);
    expect((await call<{ error: { code: string } }>('PUT', '/api/flows/team/approvals', doc)).body.error.code).toBe('FLOW_ID_INVALID');

    expect((await call('DELETE', '/api/flows/approvals')).status).toBe(204);
    expect((await nodeRedFlows()).some((node) => node.id === 'approvals' || node.z === 'approvals')).toBe(false);
    expect((await call<{ error: { code: string } }>('GET', '/api/flows/approvals')).body.error.code).toBe('FLOW_NOT_FOUND');
  }, 30_000);

  it('merges a save into a deploy someone made meanwhile, reading the flows again', async () => {
    const admin = nodeRedAdmin({ url: nodeRed.url, token });
    const flow = JSON.parse((await nodeRedFlowStore(admin).read(TAB)).text) as FlowDefinition;
    let raced = false;
    let deployed: boolean | undefined;
    // Someone deploys a node of their own right after the save read the flows.
    const racing: NodeRedAdmin = {
      ...admin,
      async flows() {
        const read = await admin.flows();
        if (!raced) {
          raced = true;
          const fresh = await admin.flows();
          deployed = await admin.deploy([...fresh.flows, { id: 'someone-else', type: 'comment', z: TAB, name: 'deployed meanwhile', x: 100, y: 500, wires: [] }], fresh.rev);
        }
        return read;
      },
    };
    const memory = flow.nodes.find((node) => node.type === 'memory.kv');
    if (memory === undefined) throw new Error('no memory');
    memory.label = 'memory, raced';
    await nodeRedFlowStore(racing).save(TAB, flow);
    expect(raced).toBe(true);
    expect(deployed).toBe(true);
    const flows = await nodeRedFlows();
    expect(flows.find((node) => node.id === 'someone-else')).toMatchObject({ name: 'deployed meanwhile' });
    expect(flows.find((node) => node.id === memory.id)?.name).toBe('memory, raced');
  }, 30_000);

  it('runs the canonical graph (examples/graph-format) in Node-RED and in Redflow\'s runtime with the same outcome, the same model requests, and logs both replay', async () => {
    const doc = example('graph-format');
    const answers = JSON.parse(readFileSync(path.join(ROOT, 'examples/graph-format/answers.json'), 'utf8')) as unknown[];
    const completions = answers.map((answer) => ({ kind: 'completion' as const, content: JSON.stringify(answer) }));
    model.reset();

    // In Node-RED: saved through Redflow's API (a tab of its own), run there.
    expect((await call('PUT', '/api/flows/graph-format', doc)).status).toBe(201);
    model.enqueue(...completions);
    const { body: started } = await call<{ traceId: string }>('POST', '/api/runs', { flow: 'graph-format', input: 'hola' });
    const inNodeRed = await stream(started.traceId);
    const nodeRedLog = path.join(userDir, 'redflow', 'runs', 'agent1', `${started.traceId}.jsonl`);
    const nodeRedRequests = model.requests.splice(0);

    // In Redflow's own runtime: the file as it is.
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-graph-format-'));
    try {
      model.enqueue(...completions);
      const log = path.join(dir, 'run.jsonl');
      const run = await runCli(['run', path.join(ROOT, 'examples/graph-format/flow.json'), '--input', 'hola', '--log', log, '--json'], {
        cwd: dir,
        env: { OPENAI_API_KEY: MODEL_KEY, OPENAI_BASE_URL: model.baseUrl },
      });
      expect(run.code, run.stderr).toBe(0);
      const inRedflow = JSON.parse(run.stdout) as { outcome: Record<string, unknown> };
      const redflowRequests = model.requests.splice(0);

      const outcomeOf = (outcome: Record<string, unknown> | undefined) => ({ status: outcome?.status, reason: outcome?.reason, answer: outcome?.answer, confidence: outcome?.confidence });
      expect(outcomeOf(inNodeRed.end?.outcome as unknown as Record<string, unknown>)).toEqual(outcomeOf(inRedflow.outcome));
      expect(inNodeRed.end?.outcome).toMatchObject({ status: 'done', answer: '¡Hola! Soy un asistente útil. ¿En qué puedo ayudarte?' });
      // The same graph asks the model the same: one request each, the same messages and tools.
      const asked = (requests: typeof nodeRedRequests) => requests.map((request) => request.body as { model: string; messages: unknown }).map(({ model: name, messages }) => ({ name, messages }));
      expect(nodeRedRequests).toHaveLength(answers.length);
      expect(asked(nodeRedRequests)).toEqual(asked(redflowRequests));
      expect(nodeRedRequests[0]?.headers.authorization).toBe(`Bearer ${MODEL_KEY}`);

      // Both logs are the same format: the same events, and `redflow replay` reads each.
      const types = async (file: string) => (await readJsonlLog(file)).events.map((event) => event.type);
      expect(await types(nodeRedLog)).toEqual(await types(log));
      for (const file of [nodeRedLog, log]) {
        const replay = await runCli(['replay', file], { cwd: dir });
        expect(replay.code, replay.stderr).toBe(0);
        expect(replay.stdout).toContain('done (final_answer)');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe.skipIf(SKIP_BROWSER)('Redflow\'s editor on a Node-RED, in Chromium at 1280×720', () => {
  let browser: FileBrowser;
  let page: Page;
  beforeAll(async () => {
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(api);
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('opens the flow that lives in Node-RED, saves a change into it, runs it there and shows its timeline, step details and statechart', async () => {
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${TAB}"]`, { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', TAB);
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(TAB);
    await expect.poll(() => page.locator('[data-testid^="node-"][data-node-type]').count()).toBe(7);
    expect(await page.locator('[data-node-type="tool.flow"]').count()).toBe(2);

    await page.fill('[data-testid="flow-name"]', 'Order status, from Redflow');
    await page.click('[data-testid="save-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('false');
    await expect.poll(async () => (await nodeRedFlows()).find((node) => node.id === TAB)?.label).toBe('Order status, from Redflow');
    expect((await nodeRedFlows()).filter((node) => node.z === TAB && node.type === 'function')).toHaveLength(2);

    await page.fill('[data-testid="run-input"]', 'Where is order A-1001?');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-runtime"]');
    const rows = page.locator('[data-testid="timeline-row"]');
    await expect.poll(() => rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-action')))).toEqual(['tool', 'tool', 'final']);
    await rows.nth(0).click();
    const details = page.locator('[data-testid="step-details"]');
    await expect.poll(() => details.getAttribute('data-iteration')).toBe('1');
    expect(JSON.parse((await details.locator('[data-testid="step-tool-input"]').first().textContent()) ?? '')).toEqual({ orderId: 'A-1001' });
    expect(JSON.parse((await details.locator('[data-testid="step-tool-output"]').first().textContent()) ?? '')).toMatchObject({ orderId: 'A-1001', carrier: 'FastShip' });
    await expect.poll(() => page.getAttribute('[data-testid="statechart"]', 'data-current-state')).not.toBe('');
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-editor.png') });
  }, 30_000);
});
