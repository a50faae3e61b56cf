import { createRequire } from 'node:module';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Svcm, type ServiceInfo, type ServiceStats } from '@nats-io/services';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import type { EndpointCalls } from '../../src/nats/microService.js';
import { Subject } from '../../src/actors/subjects.js';
import type { ToolResult } from '../../src/actors/tool.js';
import type { Transport } from '../../src/actors/transport.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { ErrorCode, type RedflowError } from '../../src/errors.js';
import { connectTestServer, startNatsServer, uniquePrefix } from '../nats/natsSupport.js';

// Actor workers as NATS micro services, against the real nats-server: they answer $SRV.PING,
// $SRV.INFO and $SRV.STATS with their endpoints (the subjects the core requests, unchanged) and
// their calls, two of them share the load of one subject's queue group, and a connection that
// may not subscribe to $SRV.> serves plainly. The discovery requests are made with
// @nats-io/services' own client, as `nats micro` makes them.

const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** A tool that sleeps `ms` before answering, and one that echoes. */
const SLEEP = `export default { name: 'sleep', description: 'sleeps', inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
  execute: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve({ slept: ms }), ms)) };`;
const ECHO = `export default { name: 'echo', description: 'echoes', inputSchema: { type: 'object' }, execute: (input) => input };`;

let dir: string;
let flowPath: string;
let nc: NatsConnection;
const workers: ActorWorker[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-actor-services-'));
  await writeFile(path.join(dir, 'sleep.mjs'), SLEEP);
  await writeFile(path.join(dir, 'echo.mjs'), ECHO);
  flowPath = path.join(dir, 'flow.json');
  await writeFile(
    flowPath,
    JSON.stringify({
      id: 'services-flow',
      nodes: [
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
        { id: 'llm', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'hello', confidence: 0.9 }] } },
        { id: 'sleep', type: 'tool.module', config: { module: 'sleep.mjs' } },
        { id: 'echo', type: 'tool.module', config: { module: 'echo.mjs' } },
      ],
      edges: [
        { id: 'e1', source: 'agent', target: 'llm' },
        { id: 'e2', source: 'agent', target: 'sleep' },
        { id: 'e3', source: 'agent', target: 'echo' },
      ],
    }),
  );
  nc = await connectTestServer('actor-services');
});

afterAll(async () => {
  for (const worker of workers) await worker.close().catch(() => undefined);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

/** A tool request as a core worker sends it. */
const toolRequest = (tool: string, n: number, input: Record<string, unknown>) => ({ traceId: `svc-${n}`, iteration: 1, tool, input, idempotencyKey: `svc-${n}:1` });

/** Every answer to a discovery request of `verb` for services called `name`, of this test's prefix only. */
async function discover<T extends { metadata?: Record<string, string> }>(verb: 'info' | 'stats' | 'ping', name: string, prefix: string): Promise<T[]> {
  // The published services package declares the connection with its own nats-core's types (see microService.ts).
  const client = new Svcm(nc as unknown as ConstructorParameters<typeof Svcm>[0]).client({ strategy: 'timer', maxWait: 1000 });
  const answers: T[] = [];
  for await (const answer of (await client[verb](name)) as AsyncIterable<T>) answers.push(answer);
  return answers.filter((answer) => answer.metadata?.['redflow.prefix'] === prefix);
}

describe('actor workers as NATS micro services', () => {
  let prefix: string;
  let transport: Transport;

  beforeAll(async () => {
    prefix = uniquePrefix();
    for (let i = 0; i < 2; i += 1) workers.push(await startActorWorker({ nc, flowPath, prefix, roles: ['model', 'tool'] }));
    transport = createNatsTransport(nc);
  });
  afterAll(() => transport.close());

  it('should answer $SRV.PING and $SRV.INFO per role with its endpoints: the subjects the core requests, each in its own queue group', async () => {
    const pings = await discover<{ name: string; id: string; version: string; metadata?: Record<string, string> }>('ping', 'redflow-tool', prefix);
    expect(pings.map((ping) => ping.id).sort()).toEqual(workers.map((worker) => worker.services.find((service) => service.name === 'redflow-tool')?.id).sort());

    const infos = await discover<ServiceInfo>('info', 'redflow-tool', prefix);
    expect(infos).toHaveLength(2);
    for (const info of infos) {
      expect(info).toMatchObject({ name: 'redflow-tool', version, metadata: { 'redflow.prefix': prefix, 'redflow.flow': 'services-flow', pid: String(process.pid) } });
      expect(info.endpoints.map((endpoint) => [endpoint.name, endpoint.subject, endpoint.queue_group]).sort()).toEqual([
        ['tool-echo', Subject.tool(prefix, 'echo'), Subject.tool(prefix, 'echo')],
        ['tool-sleep', Subject.tool(prefix, 'sleep'), Subject.tool(prefix, 'sleep')],
      ]);
    }
    const [model] = await discover<ServiceInfo>('info', 'redflow-model', prefix);
    expect(model?.endpoints.map((endpoint) => [endpoint.name, endpoint.subject, endpoint.queue_group])).toEqual([['model-llm', Subject.model(prefix, 'llm'), Subject.model(prefix, 'llm')]]);
  });

  it('should share the calls of one subject between the two workers, and count them, their errors and their time in $SRV.STATS', async () => {
    const calls = 24;
    const replies = await Promise.all(
      Array.from({ length: calls }, (_, n) => transport.request<unknown, ToolResult>(Subject.tool(prefix, 'echo'), toolRequest('echo', n, { n }), { timeoutMs: 5000 })),
    );
    expect(replies.every((reply) => reply.ok && reply.data.ok)).toBe(true);
    // A request for another tool is refused: an error reply, with the framework's headers too.
    const refused = await nc.request(Subject.tool(prefix, 'echo'), JSON.stringify(toolRequest('sleep', 99, {})), { timeout: 5000 });
    expect(refused.headers?.get('Redflow-Error')).toBe(ErrorCode.TRANSPORT_BAD_MESSAGE);
    expect([refused.headers?.get('Nats-Service-Error'), refused.headers?.get('Nats-Service-Error-Code')]).toEqual([ErrorCode.TRANSPORT_BAD_MESSAGE, '400']);

    const stats = await discover<ServiceStats>('stats', 'redflow-tool', prefix);
    expect(stats).toHaveLength(2);
    const echo = stats.map((each) => each.endpoints?.find((endpoint) => endpoint.name === 'tool-echo'));
    const served = echo.map((endpoint) => endpoint?.num_requests ?? 0);
    // Both took part: the queue group spread the calls.
    expect(served.every((count) => count > 0)).toBe(true);
    expect(served.reduce((a, b) => a + b, 0)).toBe(calls + 1);
    const data = echo.map((endpoint) => endpoint?.data as EndpointCalls);
    expect(data.reduce((total, each) => total + each.answered, 0)).toBe(calls + 1);
    expect(data.reduce((total, each) => total + each.errors, 0)).toBe(1);
    expect(data.map((each) => each.last_error).filter((code) => code !== undefined)).toEqual([ErrorCode.TRANSPORT_BAD_MESSAGE]);
    expect(data.map((each) => each.in_flight)).toEqual([0, 0]);
    // The library answers the same counts in process.
    const mine = workers.map((worker) => worker.services.find((service) => service.name === 'redflow-tool')?.calls(Subject.tool(prefix, 'echo'))?.answered ?? 0);
    expect(mine.reduce((a, b) => a + b, 0)).toBe(calls + 1);
  });

  it('should say in $SRV.STATS how many calls each worker has under way: its queue depth', async () => {
    const slow = Array.from({ length: 3 }, (_, n) => transport.request<unknown, ToolResult>(Subject.tool(prefix, 'sleep'), toolRequest('sleep', 100 + n, { ms: 1500 }), { timeoutMs: 10_000 }));
    const inFlight = async () => {
      const stats = await discover<ServiceStats>('stats', 'redflow-tool', prefix);
      return stats.map((each) => (each.endpoints?.find((endpoint) => endpoint.name === 'tool-sleep')?.data as EndpointCalls | undefined)?.in_flight ?? 0);
    };
    expect((await inFlight()).reduce((a, b) => a + b, 0)).toBe(3);
    const replies = await Promise.all(slow);
    expect(replies.every((reply) => reply.ok)).toBe(true);
    expect(await inFlight()).toEqual([0, 0]);
    const stats = await discover<ServiceStats>('stats', 'redflow-tool', prefix);
    const averages = stats.map((each) => (each.endpoints?.find((endpoint) => endpoint.name === 'tool-sleep')?.data as EndpointCalls).average_ms).filter((ms) => ms > 0);
    // Timed from the request to its reply, not only the handler's synchronous start.
    expect(averages.length).toBeGreaterThan(0);
    for (const ms of averages) expect(ms).toBeGreaterThanOrEqual(1400);
  });

  it('should leave $SRV when it closes, and still answer the calls it had taken', async () => {
    const worker = await startActorWorker({ nc, flowPath, prefix, roles: ['tool'] });
    const id = worker.services[0]?.id;
    expect((await discover<ServiceInfo>('info', 'redflow-tool', prefix)).map((info) => info.id)).toContain(id);
    await worker.close();
    expect((await discover<ServiceInfo>('info', 'redflow-tool', prefix)).map((info) => info.id)).not.toContain(id);
  });
});

describe('actor workers as micro services under deploy/nats/redflow.conf', () => {
  it("should run the tool worker's micro service as the tool user, and let the client user discover it", async () => {
    const store = await mkdtemp(path.join(tmpdir(), 'redflow-services-js-'));
    const passwords = { core: 'pcore1', client: 'pclient1', model: 'pmodel1', tool: 'ptool1', tool_lookup: 'plookup1' };
    const server = await startNatsServer(fileURLToPath(new URL('../../deploy/nats/redflow.conf', import.meta.url)), {
      REDFLOW_NATS_STORE_DIR: store,
      REDFLOW_CORE_PASSWORD: passwords.core,
      REDFLOW_CLIENT_PASSWORD: passwords.client,
      REDFLOW_MODEL_PASSWORD: passwords.model,
      REDFLOW_TOOL_PASSWORD: passwords.tool,
      REDFLOW_TOOL_LOOKUP_PASSWORD: passwords.tool_lookup,
    });
    const as = (user: 'tool' | 'client') => connectNats({ servers: server.url, user, pass: passwords[user], timeoutMs: 2000, inboxPrefix: `_INBOX_${user}` });
    const toolNc = await as('tool');
    const clientNc = await as('client');
    const lines: string[] = [];
    try {
      const worker = await startActorWorker({ nc: toolNc, flowPath, roles: ['tool'], log: (line) => lines.push(line) });
      expect(worker.services.map((service) => service.name)).toEqual(['redflow-tool']);
      expect(lines.join('\n')).not.toContain('does not let');
      const client = new Svcm(clientNc as unknown as ConstructorParameters<typeof Svcm>[0]).client({ strategy: 'timer', maxWait: 1000 });
      const infos: ServiceInfo[] = [];
      for await (const info of await client.info('redflow-tool')) infos.push(info);
      expect(infos.map((info) => [info.id, info.endpoints.map((endpoint) => endpoint.subject).sort()])).toEqual([
        [worker.services[0]?.id, ['redflow.tool.echo', 'redflow.tool.sleep']],
      ]);
      await worker.close();
    } finally {
      await toolNc.close();
      await clientNc.close();
      await server.stop();
      await rm(store, { recursive: true, force: true });
    }
  });
});

describe('an actor worker whose NATS user may not subscribe to $SRV.>', () => {
  it('should serve its subjects plainly, saying why, instead of not at all', async () => {
    const config = path.join(dir, 'no-srv.conf');
    await writeFile(
      config,
      `authorization { users: [
        { user: worker, password: w1, permissions: { subscribe: { allow: ["nosrv.tool.>"] }, publish: { deny: [">"] }, allow_responses: true } }
        { user: caller, password: c1, permissions: { publish: { allow: ["nosrv.tool.>"] }, subscribe: { allow: ["_INBOX.>"] } } }
      ] }\n`,
    );
    const server = await startNatsServer(config);
    const lines: string[] = [];
    const workerNc = await connectNats({ servers: server.url, user: 'worker', pass: 'w1', timeoutMs: 2000 });
    const callerNc = await connectNats({ servers: server.url, user: 'caller', pass: 'c1', timeoutMs: 2000 });
    try {
      const worker = await startActorWorker({ nc: workerNc, flowPath, prefix: 'nosrv', roles: ['tool'], log: (line) => lines.push(line) });
      expect(worker.services).toEqual([]);
      expect(lines.join('\n')).toMatch(/NATS does not let this connection serve the micro service redflow-tool.*subscribe permission on \$SRV\.>/);
      const caller = createNatsTransport(callerNc);
      const reply = await caller.request<unknown, ToolResult>(Subject.tool('nosrv', 'echo'), toolRequest('echo', 1, { said: 'hi' }), { timeoutMs: 5000 });
      expect(reply).toEqual({ ok: true, data: { ok: true, output: { said: 'hi' } } });
      await caller.close();
      await worker.close();
    } finally {
      await workerNc.close();
      await callerNc.close();
      await server.stop();
    }
  });
});

describe('an actor worker whose NATS user may not subscribe to a subject it serves', () => {
  it('should refuse to start with TRANSPORT_PERMISSION_DENIED naming the subject, instead of saying it serves', async () => {
    const config = path.join(dir, 'no-tool.conf');
    // May serve $SRV and another prefix's tools, not this prefix's.
    await writeFile(
      config,
      `authorization { users: [
        { user: worker, password: w1, permissions: { subscribe: { allow: ["$SRV.>", "other.tool.>"] }, publish: { allow: ["$SRV.>"] }, allow_responses: true } }
      ] }\n`,
    );
    const server = await startNatsServer(config);
    const workerNc = await connectNats({ servers: server.url, user: 'worker', pass: 'w1', timeoutMs: 2000 });
    const lines: string[] = [];
    try {
      for (const microServices of [true, false]) {
        const error = await startActorWorker({ nc: workerNc, flowPath, prefix: 'refused', roles: ['tool'], microServices, log: (line) => lines.push(line) }).then(
          () => undefined,
          (failure: unknown) => failure,
        );
        expect(error, `microServices: ${microServices}`).toMatchObject({ code: ErrorCode.TRANSPORT_PERMISSION_DENIED });
        expect((error as RedflowError).message).toContain('refused.tool.echo');
        expect((error as RedflowError).hint).toContain('subscribe permission');
      }
      expect(lines.join('\n')).not.toMatch(/actor worker serving/);
    } finally {
      await workerNc.close();
      await server.stop();
    }
  });
});

describe('core workers as a NATS micro service', () => {
  it('should answer $SRV.INFO with the run start and answer endpoints, count the runs started in $SRV.STATS, and be left out when asked', async () => {
    const prefix = uniquePrefix();
    const actors = await startActorWorker({ nc, flowPath, prefix, roles: ['model', 'tool'], microServices: false });
    const { startCoreWorker } = await import('../../src/nats/cluster/coreWorker.js');
    const { startRemoteRun } = await import('../../src/nats/cluster/remoteRun.js');
    const core = await startCoreWorker({ nc, flowPath, prefix });
    let plain: Awaited<ReturnType<typeof startCoreWorker>> | undefined;
    try {
      const infos = await discover<ServiceInfo>('info', 'redflow-core', prefix);
      expect(infos.map((info) => info.id)).toEqual([core.service?.id]);
      expect(infos[0]).toMatchObject({ name: 'redflow-core', version, metadata: { 'redflow.prefix': prefix, 'redflow.flow': 'services-flow' } });
      expect(infos[0]?.endpoints.map((endpoint) => [endpoint.subject, endpoint.queue_group]).sort()).toEqual([
        [Subject.runAnswer(prefix, '*'), 'core'],
        [Subject.runStart(prefix), 'core'],
      ]);

      const runs = await Promise.all(Array.from({ length: 6 }, (_, n) => startRemoteRun({ nc, prefix, input: `hello ${n}` })));
      for (const run of runs) expect((await run.result).outcome.reason).toBe('final_answer');
      const [stats] = await discover<ServiceStats>('stats', 'redflow-core', prefix);
      const starts = stats?.endpoints?.find((endpoint) => endpoint.subject === Subject.runStart(prefix));
      expect(starts?.num_requests).toBe(6);
      expect(starts?.data).toMatchObject({ in_flight: 0, answered: 6, errors: 0 });
      expect(core.service?.calls(Subject.runStart(prefix))?.answered).toBe(6);

      // Another core worker asked to serve plainly runs no service; the one that does is still the only one found.
      plain = await startCoreWorker({ nc, flowPath, prefix, microServices: false });
      expect(plain.service).toBeUndefined();
      expect((await discover<ServiceInfo>('info', 'redflow-core', prefix)).map((info) => info.id)).toEqual([core.service?.id]);
    } finally {
      await Promise.all([core.close(), plain?.close(), actors.close()]);
    }
    // Stopped with the worker: none of this prefix answers (or, with no other test's service up, none at all).
    const after = await discover<ServiceInfo>('info', 'redflow-core', prefix).catch((error: unknown) => (error instanceof Error && /no responders/i.test(error.message) ? [] : Promise.reject(error)));
    expect(after).toEqual([]);
  });
});
