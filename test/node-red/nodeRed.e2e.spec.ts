import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { ROOT, deployFlows, freePort, inject, nodeRedInstalls, startNodeRed, userDirWithRedflow, type NodeRedProcess } from './nodeRedProcess.js';

const DATABASE_URL = process.env.REDFLOW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `redflow_node_red_${process.pid}`;
const TAB = '7f3a0c1d5e2b4a69';

type FlowNode = Record<string, unknown> & { id: string; type: string; name?: string; wires?: string[][] };

/** A server that answers what `answer` returns; `hold` leaves a request unanswered (until the client goes away). */
async function listen(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handle(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const completion = (answer: unknown) => ({ kind: 'completion' as const, content: JSON.stringify(answer) });

/**
 * The order-status example as shipped (node-red/examples), with real capabilities: the model on a
 * local Chat Completions server, `lookup_order` a postgres tool, `track_shipment` an http tool, and
 * a flow tool `delivery_note` added; the answer goes to a local collector.
 */
function e2eFlows(urls: { model: string; tracking: string; collector: string }): FlowNode[] {
  const example = JSON.parse(readFileSync(path.join(ROOT, 'node-red/examples/order-status.json'), 'utf8')) as FlowNode[];
  const named = (name: string) => {
    const found = example.find((node) => node.name === name);
    if (found === undefined) throw new Error(`the example has no node ${name}`);
    return found;
  };
  const agent = named('Order status assistant');
  const lookup = named('lookup_order');
  const track = named('track_shipment');
  const reply = named('reply');
  // The example's tool bodies are replaced by the real tools below.
  const bodies = new Set([...(lookup.wires ?? []).flat(), ...(track.wires ?? []).flat()]);
  for (const body of [...bodies]) for (const next of example.find((node) => node.id === body)?.wires?.flat() ?? []) bodies.add(next);
  const kept = example.filter((node) => !bodies.has(node.id) && node !== lookup && node !== track);
  const flows: FlowNode[] = kept.map((node) => {
    if (node.type === 'redflow-model') return { ...node, provider: 'openai-compatible', model: 'local-model', baseUrl: urls.model, answers: '', maxRetries: 0, timeoutMs: 20_000 };
    if (node === agent) {
      return { ...node, allowedTools: ['lookup_order', 'track_shipment', 'delivery_note'], wires: [agent.wires?.[0] ?? [], agent.wires?.[1] ?? [], [lookup.id, track.id, 'd00000000000e2e1'], agent.wires?.[3] ?? []] };
    }
    if (node === reply) return { ...node, wires: [[...(node.wires?.[0] ?? []), 'd00000000000e2e4']] };
    return node;
  });
  return [
    { id: TAB, type: 'tab', label: 'Order status' },
    ...flows,
    {
      ...lookup,
      type: 'redflow-tool-postgres',
      query: `select id as "orderId", status, carrier, tracking_code as "trackingCode" from ${SCHEMA}.orders where id = :orderId`,
      readOnly: true,
      // Node-RED takes credentials inside the deployed node and keeps them out of flows.json.
      credentials: { connectionString: DATABASE_URL },
      wires: [],
    },
    { ...track, type: 'redflow-tool-http', method: 'GET', url: `${urls.tracking}/track/{trackingCode}`, wires: [] },
    {
      id: 'd00000000000e2e1',
      type: 'redflow-tool-in',
      z: TAB,
      name: 'delivery_note',
      description: 'Leaves a delivery note for the carrier.',
      inputSchema: { type: 'object', required: ['neighbour'], properties: { neighbour: { type: 'string' } } },
      x: 840,
      y: 420,
      wires: [['d00000000000e2e2']],
    },
    {
      id: 'd00000000000e2e2',
      type: 'function',
      z: TAB,
      name: 'write the note',
      func: 'msg.payload = { note: `leave it with ${msg.payload.neighbour}` };\nreturn msg;',
      outputs: 1,
      x: 1030,
      y: 420,
      wires: [['d00000000000e2e3']],
    },
    { id: 'd00000000000e2e3', type: 'redflow-tool-out', z: TAB, x: 1190, y: 420, wires: [] },
    {
      id: 'd00000000000e2e4',
      type: 'function',
      z: TAB,
      name: 'to the collector',
      func: 'msg.payload = { answer: msg.payload, traceId: msg.redflow.traceId, status: msg.redflow.outcome.status, resumed: msg.redflow.resumed === true };\nmsg.headers = { "content-type": "application/json" };\nreturn msg;',
      outputs: 1,
      x: 1000,
      y: 40,
      wires: [['d00000000000e2e5']],
    },
    { id: 'd00000000000e2e5', type: 'http request', z: TAB, method: 'POST', ret: 'txt', paytoqs: 'ignore', url: urls.collector, x: 1200, y: 40, wires: [[]] },
  ];
}

describe.each(nodeRedInstalls())('$label with the Redflow nodes installed', (install) => {
  let db: pg.Client;
  let model: FakeChatServer;
  let tracking: { server: Server; url: string };
  let collector: { server: Server; url: string };
  const trackingKeys: string[] = [];
  const answers: { answer: string; traceId: string; status: string; resumed: boolean }[] = [];
  let releaseHeld = false;
  let userDir: string;
  let nodeRed: NodeRedProcess | undefined;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    await db.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA};
      create table ${SCHEMA}.orders (id text primary key, status text, carrier text, tracking_code text);
      insert into ${SCHEMA}.orders values ('A-1001', 'shipped', 'FastShip', 'FS-77812');`);
    model = await startFakeChatCompletionsServer();
    tracking = await listen((req, _body, res) => {
      trackingKeys.push(String(req.headers['idempotency-key']));
      // The first call is held: Node-RED is killed while it waits.
      if (!releaseHeld) return;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ trackingCode: 'FS-77812', location: 'Lyon sorting centre', eta: '2026-11-23' }));
    });
    collector = await listen((_req, body, res) => {
      answers.push(JSON.parse(body) as (typeof answers)[number]);
      res.end('ok');
    });
    userDir = await userDirWithRedflow();
  }, 120_000);

  afterAll(async () => {
    await nodeRed?.kill();
    await db?.query(`drop schema if exists ${SCHEMA} cascade`).catch(() => undefined);
    await db?.end();
    await model?.stop();
    tracking?.server.closeAllConnections();
    collector?.server.closeAllConnections();
    await new Promise((resolve) => tracking?.server.close(resolve));
    await new Promise((resolve) => collector?.server.close(resolve));
    if (userDir !== undefined) await rm(path.dirname(userDir), { recursive: true, force: true });
  });

  it('runs the example graph deployed through the Admin API, survives kill -9 mid-run, and finishes the run exactly once', async () => {
    model.enqueue(
      completion({ action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.55 }),
      completion({ action: 'tool', tool: 'track_shipment', input: { trackingCode: 'FS-77812' }, confidence: 0.8 }),
      completion({ action: 'tool', tool: 'delivery_note', input: { neighbour: 'Mrs Dupont' }, confidence: 0.85 }),
      completion({ action: 'final', message: 'A-1001 shipped with FastShip; it is at the Lyon sorting centre, due 2026-11-23.', confidence: 0.93 }),
    );
    const flows = e2eFlows({ model: model.baseUrl, tracking: tracking.url, collector: collector.url });
    const agent = flows.find((node) => node.type === 'redflow-agent') as FlowNode;
    const trigger = flows.find((node) => node.type === 'inject') as FlowNode;

    nodeRed = await startNodeRed(install, userDir, await freePort());
    const { version } = (await (await fetch(`${nodeRed.url}/settings`)).json()) as { version: string };
    expect(version.startsWith(install.version), `${install.label} reports ${version}`).toBe(true);
    await deployFlows(nodeRed.url, flows);
    const saved = await readFile(path.join(userDir, 'flows.json'), 'utf8');
    expect(saved).toContain('redflow-agent');
    expect(saved).not.toContain(DATABASE_URL);

    await inject(nodeRed.url, trigger.id);
    await expect.poll(() => trackingKeys.length, { timeout: 20_000 }).toBe(1);
    const runsDir = path.join(userDir, 'redflow', 'runs', agent.id);
    const [logName] = await readdir(runsDir);
    const logPath = path.join(runsDir, logName ?? '');
    await expect.poll(async () => (await readJsonlLog(logPath)).events.at(-1)?.type).toBe('tool.requested');
    await nodeRed.kill();

    releaseHeld = true;
    nodeRed = await startNodeRed(install, userDir, await freePort());
    await expect.poll(() => answers.length, { timeout: 30_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(answers).toHaveLength(1);

    const [answer] = answers;
    const { events, problems } = await readJsonlLog(logPath);
    expect(problems).toEqual([]);
    expect(answer).toMatchObject({ status: 'done', resumed: true, traceId: events[0]?.traceId, answer: 'A-1001 shipped with FastShip; it is at the Lyon sorting centre, due 2026-11-23.' });
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'run.completed')).toHaveLength(1);
    expect(types.filter((type) => type === 'run.resumed')).toHaveLength(1);
    const completed = events.flatMap((event) => (event.type === 'tool.completed' ? [{ tool: event.data.tool, ok: event.data.ok }] : []));
    expect(completed).toEqual([
      { tool: 'lookup_order', ok: true },
      { tool: 'track_shipment', ok: true },
      { tool: 'delivery_note', ok: true },
    ]);
    const lookup = events.find((event) => event.type === 'tool.completed' && event.data.tool === 'lookup_order');
    expect(lookup?.type === 'tool.completed' && lookup.data.ok && lookup.data.output).toMatchObject({ rows: [{ orderId: 'A-1001', trackingCode: 'FS-77812' }] });
    // The held call was sent again after the restart with its key: one effect at the API.
    expect(trackingKeys).toEqual([`${answer?.traceId}:2`, `${answer?.traceId}:2`]);
    // Each iteration asked the model once, across the crash.
    expect(model.requests).toHaveLength(4);
    const memory = JSON.parse(await readFile(path.join(userDir, 'redflow/memory/demo.json'), 'utf8')) as { turns: unknown[] };
    expect(memory.turns).toHaveLength(1);

    // The log is the embedded runs' own: `redflow replay` reads it.
    const replay = await promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/redflow.js'), 'replay', logPath], { env: { ...process.env, NO_COLOR: '1' } });
    expect(replay.stdout).toContain('done (final_answer)');
    expect(replay.stdout).toContain('#3  tool   delivery_note');
    // Node-RED continues its own runs: the log names no flow file for `redflow resume`.
    const resume = await promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/redflow.js'), 'resume', logPath], { env: { ...process.env, NO_COLOR: '1' } }).catch(
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(resume).toMatchObject({ code: 64, stderr: expect.stringContaining('--flow') });
  }, 90_000);

  it('runs the seed graph (examples/graph-format) converted offline with redflow convert, finishes it once across a kill -9, and converts the tab back to the file, which redflow run runs the same', async () => {
    await nodeRed?.kill();
    model.reset();
    const dataKeys: string[] = [];
    let releaseData = false;
    const data = await listen((req, _body, res) => {
      dataKeys.push(String(req.headers['idempotency-key']));
      // The first call is held: Node-RED is killed while it waits.
      if (!releaseData) return;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ items: ['a', 'b'] }));
    });
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-graph-format-'));
    const cli = (args: string[], env: Record<string, string> = {}) =>
      promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/redflow.js'), ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env } });
    // The model.llm is the OpenAI provider: its key and base URL from the environment, in Node-RED as in `redflow run`.
    const modelEnv = { OPENAI_API_KEY: 'sk-e2e-graph-format', OPENAI_BASE_URL: model.baseUrl };
    const script = () =>
      model.enqueue(
        completion({ action: 'tool', tool: 'http1', input: {}, confidence: 0.6 }),
        completion({ action: 'final', message: 'Hay 2 elementos.', confidence: 0.9 }),
      );
    try {
      // The seed graph as shipped, its http tool on the local server.
      const doc = JSON.parse(readFileSync(path.join(ROOT, 'examples/graph-format/flow.json'), 'utf8')) as { nodes: { type: string; config?: Record<string, unknown> }[] };
      const http = doc.nodes.find((node) => node.type === 'tool.http');
      if (http === undefined) throw new Error('the seed graph has no tool.http');
      http.config = { ...http.config, url: `${data.url}/data` };
      const file = path.join(dir, 'flow.json');
      await writeFile(file, JSON.stringify(doc, null, 2));
      const converted = JSON.parse((await cli(['convert', file])).stdout) as FlowNode[];
      const tab = converted.find((node) => node.type === 'tab');
      const trigger = converted.find((node) => node.type === 'redflow-input');
      const reply = converted.find((node) => node.type === 'redflow-response');
      if (tab === undefined || trigger === undefined || reply === undefined) throw new Error(`not the seed graph: ${JSON.stringify(converted)}`);
      // Node-RED's own nodes beside it: an inject with the input, and the answer posted to the collector.
      const flows: FlowNode[] = [
        ...converted.map((node) => (node === reply ? { ...node, wires: [['a00000000000e2e2']] } : node)),
        { id: 'a00000000000e2e1', type: 'inject', z: tab.id, name: 'hola', props: [{ p: 'payload' }], payload: 'hola', payloadType: 'str', repeat: '', once: false, topic: '', x: 0, y: 300, wires: [[trigger.id]] },
        {
          id: 'a00000000000e2e2',
          type: 'function',
          z: tab.id,
          func: 'msg.payload = { answer: msg.payload, traceId: msg.redflow.traceId, status: msg.redflow.outcome.status, resumed: msg.redflow.resumed === true };\nmsg.headers = { "content-type": "application/json" };\nreturn msg;',
          outputs: 1,
          x: 800,
          y: 300,
          wires: [['a00000000000e2e3']],
        },
        { id: 'a00000000000e2e3', type: 'http request', z: tab.id, method: 'POST', ret: 'txt', paytoqs: 'ignore', url: collector.url, x: 1000, y: 300, wires: [[]] },
      ];
      script();
      nodeRed = await startNodeRed(install, userDir, await freePort(), {}, { env: modelEnv });
      await deployFlows(nodeRed.url, flows);
      const before = answers.length;
      await inject(nodeRed.url, 'a00000000000e2e1');
      await expect.poll(() => dataKeys.length, { timeout: 20_000 }).toBe(1);
      const runsDir = path.join(userDir, 'redflow', 'runs', 'agent1');
      const [logName] = await readdir(runsDir);
      const logPath = path.join(runsDir, logName ?? '');
      await expect.poll(async () => (await readJsonlLog(logPath)).events.at(-1)?.type).toBe('tool.requested');
      await nodeRed.kill();

      releaseData = true;
      nodeRed = await startNodeRed(install, userDir, await freePort(), {}, { env: modelEnv });
      await expect.poll(() => answers.length, { timeout: 30_000 }).toBe(before + 1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(answers).toHaveLength(before + 1);
      const { events, problems } = await readJsonlLog(logPath);
      expect(problems).toEqual([]);
      expect(answers.at(-1)).toEqual({ answer: 'Hay 2 elementos.', status: 'done', resumed: true, traceId: events[0]?.traceId });
      const types = events.map((event) => event.type);
      expect(types.filter((type) => type === 'run.completed')).toHaveLength(1);
      expect(types.filter((type) => type === 'run.resumed')).toHaveLength(1);
      // The held call was sent again with its key, and each iteration asked the model once.
      expect(dataKeys).toEqual([`${events[0]?.traceId}:1`, `${events[0]?.traceId}:1`]);
      expect(model.requests).toHaveLength(2);

      // The tab, read back from Node-RED, converts to the file it came from, without Node-RED's own nodes.
      const deployed = path.join(dir, 'deployed.json');
      await writeFile(deployed, JSON.stringify(await (await fetch(`${nodeRed.url}/flows`)).json()));
      await cli(['convert', deployed, '--tab', tab.id, '-o', path.join(dir, 'back.json')]);
      expect(JSON.parse(await readFile(path.join(dir, 'back.json'), 'utf8'))).toEqual(doc);
      // And `redflow run` runs it with the same outcome: both logs replay.
      script();
      const run = await cli(['run', 'back.json', '--input', 'hola', '--log', 'run.jsonl', '--json'], modelEnv);
      expect((JSON.parse(run.stdout) as { outcome: unknown }).outcome).toMatchObject({ status: 'done', answer: 'Hay 2 elementos.' });
      for (const log of [logPath, path.join(dir, 'run.jsonl')]) expect((await cli(['replay', log])).stdout).toContain('done (final_answer)');
    } finally {
      data.server.closeAllConnections();
      await new Promise((resolve) => data.server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
