import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { ErrorCode } from '../../src/errors.js';
import { connectNats } from '../../src/nats/connect.js';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import { createNatsKvMemoryStore } from '../../src/nats/kv/natsKvMemoryStore.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { serveMemory, serveModel, serveTool } from '../../src/runtime/serveActors.js';
import { Storage, Subject } from '../../src/actors/subjects.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import type { Transport } from '../../src/actors/transport.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { fold } from '../../src/events/evolve.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { openTraceToRead } from '../../src/nats/cluster/openTraceToRead.js';
import { parseTraceEvents } from '../../src/nats/cluster/traceEvent.js';
import { isTerminal } from '../../src/events/eventTypes.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import { eventually, startNatsServer, type PrivateNatsServer } from './natsSupport.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';

/**
 * deploy/nats/redflow.conf, exactly as shipped, started with its environment: every role connects
 * as its own user, and what the permissions allow and refuse is checked through the real server.
 */
const CONFIG = fileURLToPath(new URL('../../deploy/nats/redflow.conf', import.meta.url));
const PREFIX = 'redflow';
const TRACE_STREAM = Storage.traceStream(PREFIX);
// nats-server parses an environment value as a config token: one starting with a digit is read
// as a number and refused, so these passwords start with a letter (the README says so too).
const password = () => `p${randomBytes(12).toString('hex')}`;
const passwords = {
  core: password(),
  client: password(),
  model: password(),
  tool: password(),
  tool_lookup: password(),
};
type Role = keyof typeof passwords;

/** A connection as one user, with the errors the server reported to it. */
interface Client {
  readonly nc: NatsConnection;
  readonly errors: Error[];
  readonly logLines: string[];
  readonly transport: Transport;
}

let dir: string;
let server: PrivateNatsServer;
const clients: Client[] = [];

async function connectAs(role: Role): Promise<Client> {
  const nc = await connectNats({
    servers: server.url,
    user: role,
    pass: passwords[role],
    name: `permissions-${role}`,
    timeoutMs: 2000,
    inboxPrefix: `_INBOX_${role}`,
  });
  const errors: Error[] = [];
  void (async () => {
    for await (const status of nc.status()) if (status.type === 'error') errors.push(status.error);
  })();
  const logLines: string[] = [];
  const client = { nc, errors, logLines, transport: createNatsTransport(nc, { log: (line) => logLines.push(line) }) };
  clients.push(client);
  return client;
}

/** Resolves once the server has refused `operation` on `subject` to this connection. */
async function violation(client: Client, operation: 'publish' | 'subscription', subject: string): Promise<PermissionViolationError> {
  let found: PermissionViolationError | undefined;
  await eventually(() => {
    found = client.errors.find(
      (error): error is PermissionViolationError =>
        error instanceof PermissionViolationError && error.operation === operation && error.subject === subject,
    );
    return found !== undefined;
  });
  return found as PermissionViolationError;
}

/** What a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** True when `error` is, or was caused by, a permission violation. */
function isPermissionError(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof PermissionViolationError || /permissions violation/i.test(cause.message)) return true;
  }
  return false;
}

/** A tool taking `{ id }` that counts its executions. */
function idTool(name: string, execute: (input: Record<string, unknown>) => unknown) {
  let executions = 0;
  const tool: ToolDefinition = {
    name,
    description: `${name} by id`,
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: false },
    execute(input) {
      executions++;
      return execute(input);
    },
  };
  return { tool, executions: () => executions };
}

/** A tool request as a core worker sends it. */
const toolRequest = (tool: string, traceId: string, iteration: number, input: Record<string, unknown>) => ({
  traceId,
  iteration,
  tool,
  input,
  idempotencyKey: `${traceId}:${iteration}`,
});

let core: Client;
let runClient: Client;
let model: Client;
let tool: Client;
let toolLookup: Client;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-nats-permissions-'));
  server = await startNatsServer(CONFIG, {
    REDFLOW_NATS_STORE_DIR: path.join(dir, 'jetstream'),
    REDFLOW_CORE_PASSWORD: passwords.core,
    REDFLOW_CLIENT_PASSWORD: passwords.client,
    REDFLOW_MODEL_PASSWORD: passwords.model,
    REDFLOW_TOOL_PASSWORD: passwords.tool,
    REDFLOW_TOOL_LOOKUP_PASSWORD: passwords.tool_lookup,
  });
  [core, runClient, model, tool, toolLookup] = await Promise.all([
    connectAs('core'),
    connectAs('client'),
    connectAs('model'),
    connectAs('tool'),
    connectAs('tool_lookup'),
  ]);
});

afterAll(async () => {
  for (const client of clients) {
    await client.transport.close();
    await client.nc.close();
  }
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('deploy/nats/redflow.conf', () => {
  it("should keep each user out of the others' replies", async () => {
    const tool = await connectAs('tool');
    tool.nc.subscribe('_INBOX.>');
    tool.nc.subscribe('_INBOX_core.>');
    expect(await violation(tool, 'subscription', '_INBOX.>')).toBeInstanceOf(PermissionViolationError);
    expect(await violation(tool, 'subscription', '_INBOX_core.>')).toBeInstanceOf(PermissionViolationError);
    const core = await connectAs('core');
    core.nc.subscribe('_INBOX_tool.>');
    expect(await violation(core, 'subscription', '_INBOX_tool.>')).toBeInstanceOf(PermissionViolationError);
  });

  it('should run the real workers under their own users (core, model and tool) for a client (`redflow run`, then `replay`)', async () => {
    const flowPath = fileURLToPath(new URL('../fixtures/cluster/flow.json', import.meta.url));
    const core = await connectAs('core');
    const client = await connectAs('client');
    const model = await connectAs('model');
    const tool = await connectAs('tool');
    const modelWorker = await startActorWorker({ nc: model.nc, flowPath, roles: ['model'] });
    const toolWorker = await startActorWorker({ nc: tool.nc, flowPath, roles: ['tool'], serveTool: await idempotentToolServer(tool.nc, PREFIX) });
    const coreWorker = await startCoreWorker({ nc: core.nc, flowPath, leaseMs: 1000 });
    try {
      const live: string[] = [];
      const run = await startRemoteRun({ nc: client.nc, input: 'go', onEvent: (event) => live.push(event.type) });
      const { outcome, envelope } = await run.result;
      expect(outcome.reason).toBe('final_answer');
      expect(envelope.tools.history.map((call) => call.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const replayed = await openJetStreamEventStore(client.nc, { prefix: PREFIX });
      const { events, problems } = await replayed.read(run.traceId);
      await replayed.close();
      expect(problems).toEqual([]);
      expect(events.map((event) => event.type)).toEqual(live);
      expect(fold(events)).toEqual(envelope);
      expect([...core.errors, ...client.errors, ...model.errors, ...tool.errors].filter(isPermissionError)).toEqual([]);
    } finally {
      await coreWorker.close();
      await toolWorker.close();
      await modelWorker.close();
    }
  }, 20_000);

  it('should let `redflow serve --nats` start, follow, list and abort runs as the client user', async () => {
    const flowsDir = fileURLToPath(new URL('../fixtures/natsBackend/flows', import.meta.url));
    const flowPath = path.join(flowsDir, 'gated.json');
    const gateHolder = globalThis as { __natsBackendGate?: Promise<void> };
    let open: () => void = () => undefined;
    gateHolder.__natsBackendGate = new Promise<void>((resolve) => (open = resolve));
    const core = await connectAs('core');
    const serve = await connectAs('client');
    const model = await connectAs('model');
    const tool = await connectAs('tool');
    const modelWorker = await startActorWorker({ nc: model.nc, flowPath, roles: ['model'] });
    const toolWorker = await startActorWorker({ nc: tool.nc, flowPath, roles: ['tool'], serveTool: await idempotentToolServer(tool.nc, PREFIX) });
    const coreWorker = await startCoreWorker({ nc: core.nc, flowPath, leaseMs: 1000 });
    const backend = await createNatsRunBackend({ nc: serve.nc, flowsDir });
    try {
      const flow = JSON.parse(await readFile(flowPath, 'utf8')) as FlowDefinition;
      const { traceId } = await backend.start({ flowId: 'gated', flowPath, flow, input: 'go' });
      const types: string[] = [];
      let ended = false;
      void (async () => {
        for await (const event of backend.follow(traceId, 0)) {
          types.push(event.type);
          ended ||= isTerminal(event);
        }
      })();
      await eventually(() => types.includes('tool.requested'), 5000);
      expect((await backend.list({ limit: 10 }))[0]).toMatchObject({ traceId, status: 'running', flow: 'gated' });
      await expect(backend.abort(traceId, 'checked')).resolves.toBe('aborting');
      await eventually(() => ended, 5000);
      expect(await backend.get(traceId)).toMatchObject({ status: 'finished', outcome: { reason: 'aborted' } });
      await expect(backend.abort(traceId)).resolves.toBe('finished');
      await expect(backend.abort('no-such-run')).resolves.toBe('unknown');
      // A tool worker may not abort runs.
      const refused = await tool.transport.request(Subject.runAbort(PREFIX, traceId), {}, { timeoutMs: 2000 });
      expect(refused).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_PERMISSION_DENIED } });
      expect([...core.errors, ...serve.errors, ...model.errors].filter(isPermissionError)).toEqual([]);
    } finally {
      open();
      gateHolder.__natsBackendGate = undefined;
      await backend.close();
      await coreWorker.close();
      await toolWorker.close();
      await modelWorker.close();
    }
  }, 20_000);

  it('should let `redflow serve --nats` answer a waiting run as the client user, and a core worker take the answer', async () => {
    const flowsDir = await mkdtemp(path.join(tmpdir(), 'redflow-permissions-waits-'));
    const flowPath = await writeWaitingFlow(flowsDir, waitingFlow([waitAnswer.ask(), waitAnswer.final('answered')]), 'waits.json');
    const core = await connectAs('core');
    const serve = await connectAs('client');
    const model = await connectAs('model');
    const tool = await connectAs('tool');
    const modelWorker = await startActorWorker({ nc: model.nc, flowPath, roles: ['model'] });
    const coreWorker = await startCoreWorker({ nc: core.nc, flowPath, leaseMs: 1000 });
    const backend = await createNatsRunBackend({ nc: serve.nc, flowsDir });
    try {
      const flow = JSON.parse(await readFile(flowPath, 'utf8')) as FlowDefinition;
      const { traceId } = await backend.start({ flowId: 'waits', flowPath, flow, input: 'go' });
      for (let tries = 0; (await backend.get(traceId))?.status !== 'waiting'; tries++) {
        if (tries > 200) throw new Error('the run did not park');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // A tool worker may not answer runs.
      const refused = await tool.transport.request(Subject.runAnswer(PREFIX, traceId), { kind: 'tool-result', ok: true, output: 1 }, { timeoutMs: 2000 });
      expect(refused).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_PERMISSION_DENIED } });
      await expect(backend.answer(traceId, { kind: 'client', result: { ok: true, output: 'hello' } })).resolves.toBe('answered');
      for (let tries = 0; (await backend.get(traceId))?.status !== 'finished'; tries++) {
        if (tries > 200) throw new Error('the run did not finish');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await backend.get(traceId)).toMatchObject({ outcome: { status: 'done', answer: 'answered' } });
      expect([...core.errors, ...serve.errors, ...model.errors].filter(isPermissionError)).toEqual([]);
    } finally {
      await backend.close();
      await coreWorker.close();
      await modelWorker.close();
      await rm(flowsDir, { recursive: true, force: true });
    }
  }, 20_000);

  it('should refuse connections without a password of the file', async () => {
    const anonymous = await connectNats({ servers: server.url, timeoutMs: 2000 }).catch((error: unknown) => error);
    const wrong = await connectNats({ servers: server.url, user: 'tool', pass: passwords.core, timeoutMs: 2000 }).catch((error: unknown) => error);
    for (const failure of [anonymous, wrong]) expect(failure).toMatchObject({ code: ErrorCode.TRANSPORT_CONNECT_FAILED });
  });

  it('should run an agent end to end: core asks the model and tool workers, logs to JetStream, tools keep results by key', async () => {
    // The `tool` user makes the results bucket; the confined user binds to it.
    await idempotentToolServer(tool.nc, PREFIX);
    const lookup = idTool('lookup_order', (input) => ({ id: input.id, status: 'shipped' }));
    const echo = countingTool('echo');
    const served = [
      serveModel(
        model.transport,
        Subject.model(PREFIX, 'llm1'),
        createScriptedModel([answer.tool('lookup_order', { id: 'A-1001' }), answer.tool('echo', { text: 'hi' }), answer.final('Shipped.')]),
      ),
      (await idempotentToolServer(toolLookup.nc, PREFIX))(toolLookup.transport, Subject.tool(PREFIX, 'lookup_order'), lookup.tool),
      serveTool(tool.transport, Subject.tool(PREFIX, 'echo'), echo.tool),
    ];
    await Promise.all([model.nc.flush(), toolLookup.nc.flush(), tool.nc.flush()]);

    const store = await openJetStreamEventStore(core.nc, { prefix: PREFIX });
    const live: { subject: string; types: string[] }[] = [];
    const tail = runClient.nc.subscribe(Subject.allTraces(PREFIX), {
      callback: (_error, msg) => void live.push({ subject: msg.subject, types: (parseTraceEvents(msg.data) ?? []).map((event) => event.type) }),
    });
    await runClient.nc.flush();
    const run = startRun({
      agent: agentConfig({ allowedTools: ['lookup_order', 'echo'] }),
      tools: [lookup.tool, echo.tool].map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      transport: core.transport,
      subjects: { model: Subject.model(PREFIX, 'llm1'), tool: (name) => Subject.tool(PREFIX, name) },
      store,
      input: 'Where is order A-1001?',
      traceId: 'perm-run-1',
    });
    const result = await run.result;
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'Shipped.' });

    const { events, problems } = await store.read('perm-run-1');
    expect(problems).toEqual([]);
    expect(fold(events)).toEqual(result.envelope);
    expect(events.filter((event) => event.type === 'tool.completed')).toHaveLength(2);
    await eventually(() => live.flatMap((message) => message.types).length === events.length);
    expect(live.flatMap((message) => message.types)).toEqual(events.map((event) => event.type));
    // Live: one event per message, on the subject of its type.
    expect(live.map((message) => message.types.length)).toEqual(events.map(() => 1));
    expect(live.map((message) => message.subject)).toEqual(events.map((event) => Subject.trace(PREFIX, 'perm-run-1', event.type)));
    expect(lookup.executions()).toBe(1);
    expect(echo.calls).toEqual([{ text: 'hi' }]);

    // A repeated key is answered from the bucket, not executed again.
    const repeated = await core.transport.request(Subject.tool(PREFIX, 'lookup_order'), toolRequest('lookup_order', 'perm-run-1', 1, { id: 'A-1001' }), {
      timeoutMs: 2000,
    });
    expect(repeated).toEqual({ ok: true, data: { ok: true, output: { id: 'A-1001', status: 'shipped' } } });
    expect(lookup.executions()).toBe(1);

    tail.unsubscribe();
    for (const subscription of served) subscription.unsubscribe();
    await store.close();
    for (const client of [core, runClient, model, tool]) expect(client.errors).toEqual([]);
    // The confined user's one refusal: opening the results bucket, which it may not look up (it binds instead).
    expect(toolLookup.errors.map((error) => error.message)).toEqual([expect.stringContaining('Publish to "$JS.API.INFO"')]);
  });

  it('should let core workers serve run starts to `redflow run` clients (the client user), and use the runs and memory buckets', async () => {
    const starts = core.transport.serve(Subject.runStart(PREFIX), (request: { flow: string }) => ({ accepted: request.flow }));
    await core.nc.flush();
    await expect(runClient.transport.request(Subject.runStart(PREFIX), { flow: 'order-status' }, { timeoutMs: 2000 })).resolves.toEqual({
      ok: true,
      data: { accepted: 'order-status' },
    });
    starts.unsubscribe();

    const runs = await new Kvm(core.nc).create(Storage.runsBucket(PREFIX));
    await runs.put('perm-run-1', JSON.stringify({ owner: 'core-1' }));
    expect((await runs.get('perm-run-1'))?.json()).toEqual({ owner: 'core-1' });
    const memory = await createNatsKvMemoryStore(core.nc, { bucket: Storage.memoryBucket(PREFIX) });
    await memory.save('conversation-1', { turns: 1 });
    await expect(memory.load('conversation-1')).resolves.toEqual({ turns: 1 });
    // The memory actors are served by core workers, next to their bucket, and asked by core workers.
    const memoryActor = serveMemory(core.transport, PREFIX, 'memory', memory);
    await core.nc.flush();
    const otherCore = await connectAs('core');
    await expect(
      otherCore.transport.request(Subject.memoryLoad(PREFIX, 'memory'), { conversationId: 'conversation-1' }, { timeoutMs: 2000 }),
    ).resolves.toEqual({ ok: true, data: { turns: 1 } });
    memoryActor.unsubscribe();
    expect([...core.errors, ...otherCore.errors, ...runClient.errors]).toEqual([]);
  });

  it('should keep the event log append-only for core workers: no delete or purge of the trace stream', async () => {
    const jsm = await jetstreamManager(core.nc);
    await jsm.streams.info(TRACE_STREAM);
    expect(isPermissionError(await rejection(jsm.streams.delete(TRACE_STREAM)))).toBe(true);
    expect(isPermissionError(await rejection(jsm.streams.purge(TRACE_STREAM)))).toBe(true);
    expect((await jsm.streams.info(TRACE_STREAM)).state.messages).toBeGreaterThan(0);
  });

  describe('a tool worker', () => {
    it('should not publish on trace subjects: the server refuses it, subscribers and the stream never see it', async () => {
      const seen: string[] = [];
      const sub = core.nc.subscribe(Subject.allTraces(PREFIX), { callback: (_error, msg) => void seen.push(msg.subject) });
      await core.nc.flush();
      const subject = Subject.trace(PREFIX, 'x', 'run.started');
      tool.transport.publish(subject, { forged: true });
      await tool.nc.flush();
      await violation(tool, 'publish', subject);
      // Through JetStream as well.
      expect(isPermissionError(await rejection(jetstream(tool.nc).publish(Subject.log(PREFIX, 'x', 'run.ended'), '{}')))).toBe(true);
      await core.nc.flush();
      expect(seen).toEqual([]);
      const jsm = await jetstreamManager(core.nc);
      const info = await jsm.streams.info(TRACE_STREAM, { subjects_filter: Subject.runLog(PREFIX, 'x') });
      expect(info.state.subjects ?? {}).toEqual({});
      sub.unsubscribe();
    });

    it('should not call another tool or a model', async () => {
      let calls = 0;
      const other = tool.transport.serve(Subject.tool(PREFIX, 'other'), () => ++calls);
      const llm = serveModel(model.transport, Subject.model(PREFIX, 'llm1'), createScriptedModel([answer.final('never')]));
      await Promise.all([tool.nc.flush(), model.nc.flush()]);
      for (const client of [tool, toolLookup]) {
        for (const subject of [Subject.tool(PREFIX, 'other'), Subject.model(PREFIX, 'llm1')]) {
          const reply = await client.transport.request(subject, { traceId: 't', iteration: 1, messages: [] }, { timeoutMs: 2000 });
          expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_PERMISSION_DENIED } });
          await violation(client, 'publish', subject);
        }
      }
      // The same requests from a core worker get through.
      await expect(core.transport.request(Subject.tool(PREFIX, 'other'), {}, { timeoutMs: 2000 })).resolves.toEqual({ ok: true, data: 1 });
      expect(calls).toBe(1);
      // …and a core worker may not serve a tool either.
      core.transport.serve(Subject.tool(PREFIX, 'forged'), () => 'forged');
      await violation(core, 'subscription', Subject.tool(PREFIX, 'forged'));
      other.unsubscribe();
      llm.unsubscribe();
    });

    it('should not read the trace stream, live or stored, nor open the core buckets', async () => {
      const sub = tool.nc.subscribe(Subject.allTraces(PREFIX));
      await violation(tool, 'subscription', Subject.allTraces(PREFIX));
      await expect(sub.closed).resolves.toBeInstanceOf(PermissionViolationError);

      const jsm = await jetstreamManager(tool.nc);
      expect(isPermissionError(await rejection(jsm.streams.info(TRACE_STREAM)))).toBe(true);
      expect(isPermissionError(await rejection(jsm.streams.getMessage(TRACE_STREAM, { seq: 1 })))).toBe(true);
      expect(isPermissionError(await rejection(jsm.direct.getMessage(TRACE_STREAM, { seq: 1 })))).toBe(true);
      expect(isPermissionError(await rejection(jsm.consumers.add(TRACE_STREAM, { filter_subject: Subject.allLogs(PREFIX) })))).toBe(true);
      expect(isPermissionError(await rejection(jetstream(tool.nc).consumers.get(TRACE_STREAM)))).toBe(true);
      for (const bucket of [Storage.runsBucket(PREFIX), Storage.memoryBucket(PREFIX)]) {
        expect(isPermissionError(await rejection(new Kvm(tool.nc).create(bucket)))).toBe(true);
      }
      // Its own bucket works.
      const results = await new Kvm(tool.nc).create(Storage.toolResultsBucket(PREFIX));
      await results.put('k', '{"ok":true}');
      expect((await results.get('k'))?.json()).toEqual({ ok: true });
    });
  });

  describe('a client', () => {
    it('should not forge trace events: the server refuses them, subscribers and the stream never see them', async () => {
      const client = await connectAs('client');
      const seen: string[] = [];
      const sub = core.nc.subscribe(Subject.allTraces(PREFIX), { callback: (_error, msg) => void seen.push(msg.subject) });
      await core.nc.flush();
      const subject = Subject.trace(PREFIX, 'forged-by-client', 'run.completed');
      client.transport.publish(subject, { forged: true });
      await client.nc.flush();
      await violation(client, 'publish', subject);
      expect(isPermissionError(await rejection(jetstream(client.nc).publish(Subject.log(PREFIX, 'forged-by-client', 'run.started'), '{}')))).toBe(true);
      await core.nc.flush();
      expect(seen).toEqual([]);
      const info = await (await jetstreamManager(core.nc)).streams.info(TRACE_STREAM, { subjects_filter: Subject.runLog(PREFIX, 'forged-by-client') });
      expect(info.state.subjects ?? {}).toEqual({});
      sub.unsubscribe();
    });

    it('should not serve run starts or aborts, nor reach the actors', async () => {
      const client = await connectAs('client');
      for (const subject of [Subject.runStart(PREFIX), Subject.runAborts(PREFIX)]) {
        client.transport.serve(subject, () => 'taken');
        await violation(client, 'subscription', subject);
      }
      for (const subject of [Subject.model(PREFIX, 'llm1'), Subject.tool(PREFIX, 'lookup_order'), Subject.memoryLoad(PREFIX, 'memory')]) {
        const reply = await client.transport.request(subject, { traceId: 't', iteration: 1, messages: [] }, { timeoutMs: 2000 });
        expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_PERMISSION_DENIED } });
      }
      // Nor read the replies of others.
      client.nc.subscribe('_INBOX_core.>');
      await violation(client, 'subscription', '_INBOX_core.>');
    });

    it('should not write any KV bucket, nor create, change or purge the stream', async () => {
      // The buckets exist: the core and tool users made them in the tests above.
      await new Kvm(core.nc).create(Storage.runsBucket(PREFIX));
      const client = await connectAs('client');
      for (const bucket of [Storage.runsBucket(PREFIX), Storage.leasesBucket(PREFIX), Storage.memoryBucket(PREFIX), Storage.toolResultsBucket(PREFIX)]) {
        const kv = await new Kvm(client.nc).open(bucket);
        expect(isPermissionError(await rejection(kv.put('forged-run', JSON.stringify({ owner: 'forger' }))))).toBe(true);
        expect(isPermissionError(await rejection(new Kvm(client.nc).create(`${bucket}-x`)))).toBe(true);
      }
      // It reads the runs bucket (is a run under way?), and nothing else of the buckets.
      const runs = await new Kvm(client.nc).open(Storage.runsBucket(PREFIX));
      expect(await runs.get('forged-run')).toBeNull();
      const memory = await new Kvm(client.nc).open(Storage.memoryBucket(PREFIX));
      expect(isPermissionError(await rejection(memory.get('conversation-1')))).toBe(true);
      const jsm = await jetstreamManager(client.nc);
      expect(isPermissionError(await rejection(jsm.streams.add({ name: 'REDFLOW_FORGED', subjects: ['redflow.forged.>'] })))).toBe(true);
      expect(isPermissionError(await rejection(jsm.streams.update(TRACE_STREAM, { max_msgs: 1 })))).toBe(true);
      expect(isPermissionError(await rejection(jsm.streams.purge(TRACE_STREAM)))).toBe(true);
      expect(isPermissionError(await rejection(jsm.streams.delete(TRACE_STREAM)))).toBe(true);
      expect((await jsm.streams.info(TRACE_STREAM)).state.messages).toBeGreaterThan(0);
    });
  });

  describe('a client on a cluster that has not run yet', () => {
    it('should be told that the trace stream does not exist yet, which it may not create', async () => {
      const fresh = await startNatsServer(CONFIG, {
        REDFLOW_NATS_STORE_DIR: path.join(dir, 'fresh-jetstream'),
        REDFLOW_CORE_PASSWORD: passwords.core,
        REDFLOW_CLIENT_PASSWORD: passwords.client,
        REDFLOW_MODEL_PASSWORD: passwords.model,
        REDFLOW_TOOL_PASSWORD: passwords.tool,
        REDFLOW_TOOL_LOOKUP_PASSWORD: passwords.tool_lookup,
      });
      const nc = await connectNats({ servers: fresh.url, user: 'client', pass: passwords.client, inboxPrefix: '_INBOX_client', timeoutMs: 2000 });
      try {
        await expect(openTraceToRead(nc, PREFIX)).rejects.toMatchObject({
          code: ErrorCode.LOG_STORE_UNAVAILABLE,
          message: expect.stringContaining('does not exist yet'),
          hint: expect.stringContaining('core worker'),
        });
        // Nothing was made: the stream still does not exist.
        await expect((await jetstreamManager(nc)).streams.info(TRACE_STREAM)).rejects.toMatchObject({ code: 10059 });
      } finally {
        await nc.close();
        await fresh.stop();
      }
    });
  });

  describe('a model worker', () => {
    it('should not publish on trace subjects, call a tool or use JetStream', async () => {
      const subject = Subject.trace(PREFIX, 'x', 'run.started');
      model.transport.publish(subject, { forged: true });
      await model.nc.flush();
      await violation(model, 'publish', subject);
      // It may not even receive replies: a request fails on its inbox subscription.
      const reply = await model.transport.request(Subject.tool(PREFIX, 'echo'), {}, { timeoutMs: 2000 });
      expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_PERMISSION_DENIED } });
      expect(isPermissionError(await rejection(jetstreamManager(model.nc)))).toBe(true);
    });
  });

  describe('a user confined to one tool', () => {
    it("should reach only its own tool's results: never read or forge another tool's, while its own repeated key is answered from storage", async () => {
      const bucket = Storage.toolResultsBucket(PREFIX);
      const stream = `KV_${bucket}`;
      // track_shipment runs under the `tool` user, lookup_order under the confined one.
      const [core, tool, toolLookup] = await Promise.all([connectAs('core'), connectAs('tool'), connectAs('tool_lookup')]);
      const track = idTool('track_shipment', (input) => ({ id: input.id, at: 'depot' }));
      const lookup = idTool('lookup_order', (input) => ({ id: input.id, status: 'shipped' }));
      const served = [
        (await idempotentToolServer(tool.nc, PREFIX))(tool.transport, Subject.tool(PREFIX, 'track_shipment'), track.tool),
        (await idempotentToolServer(toolLookup.nc, PREFIX))(toolLookup.transport, Subject.tool(PREFIX, 'lookup_order'), lookup.tool),
      ];
      await Promise.all([tool.nc.flush(), toolLookup.nc.flush()]);
      const call = (name: string, traceId: string, iteration: number) =>
        core.transport.request(Subject.tool(PREFIX, name), toolRequest(name, traceId, iteration, { id: 'A-1' }), { timeoutMs: 5000 });
      try {
        // Its own tool, end to end: a repeated key is answered from storage, not executed again.
        const first = await call('lookup_order', 'confined-run-1', 1);
        expect(first).toEqual({ ok: true, data: { ok: true, output: { id: 'A-1', status: 'shipped' } } });
        expect(await call('lookup_order', 'confined-run-1', 1)).toEqual(first);
        expect(lookup.executions()).toBe(1);
        expect(await call('track_shipment', 'confined-run-1', 2)).toEqual({ ok: true, data: { ok: true, output: { id: 'A-1', at: 'depot' } } });

        // Reading track_shipment's result: by key, by sequence (direct or not), by listing the keys, by a consumer.
        const kv = await new Kvm(toolLookup.nc).open(bucket, { allow_direct: true });
        expect(await kv.get('lookup_order.confined-run-1.1')).toMatchObject({ operation: 'PUT' });
        expect(isPermissionError(await rejection(kv.get('track_shipment.confined-run-1.2')))).toBe(true);
        const jsm = await jetstreamManager(toolLookup.nc, { checkAPI: false });
        expect(isPermissionError(await rejection(jsm.direct.getMessage(stream, { seq: 1 })))).toBe(true);
        expect(isPermissionError(await rejection(jsm.direct.getMessage(stream, { last_by_subj: `$KV.${bucket}.track_shipment.confined-run-1.2` })))).toBe(true);
        expect(isPermissionError(await rejection(jsm.streams.getMessage(stream, { seq: 1 })))).toBe(true);
        expect(isPermissionError(await rejection(jsm.streams.info(stream, { subjects_filter: '>' })))).toBe(true);
        expect(isPermissionError(await rejection(jsm.consumers.add(stream, { filter_subject: `$KV.${bucket}.>` })))).toBe(true);

        // Forging a result for a call of track_shipment that has not run yet, under its key or a bare one.
        const forged = JSON.stringify({ v: 1, state: 'done', owner: 'forger', result: { ok: true, output: { forged: true } } });
        for (const key of ['track_shipment.confined-run-2.1', 'confined-run-2.1']) {
          expect(isPermissionError(await rejection(kv.put(key, forged)))).toBe(true);
        }
        expect(await call('track_shipment', 'confined-run-2', 1)).toEqual({ ok: true, data: { ok: true, output: { id: 'A-1', at: 'depot' } } });
        expect(track.executions()).toBe(2);
        expect([...tool.errors, ...core.errors].filter(isPermissionError)).toEqual([]);
      } finally {
        for (const subscription of served) subscription.unsubscribe();
      }
    });

    it("should hear the cancels of its own tool's calls (a core worker's run was aborted), and no other tool's", async () => {
      const [core, tool, toolLookup] = await Promise.all([connectAs('core'), connectAs('tool'), connectAs('tool_lookup')]);
      await idempotentToolServer(tool.nc, PREFIX); // the `tool` user makes the results bucket
      let started = 0;
      const cancelled: unknown[] = [];
      const lookup: ToolDefinition = {
        name: 'lookup_order',
        description: 'Waits until cancelled',
        inputSchema: { type: 'object' },
        execute: (_input, { signal }) =>
          new Promise((_resolve, reject) => {
            started++;
            signal.addEventListener('abort', () => {
              cancelled.push(signal.reason);
              reject(new Error('cancelled'));
            });
          }),
      };
      const served = (await idempotentToolServer(toolLookup.nc, PREFIX))(toolLookup.transport, Subject.tool(PREFIX, 'lookup_order'), lookup);
      await toolLookup.nc.flush();
      try {
        const controller = new AbortController();
        const reply = core.transport.request(Subject.tool(PREFIX, 'lookup_order'), toolRequest('lookup_order', 'cancelled-run-1', 1, {}), {
          timeoutMs: 10_000,
          signal: controller.signal,
        });
        await eventually(() => started === 1, 5000);
        controller.abort();
        await expect(reply).resolves.toMatchObject({ ok: false, error: { code: ErrorCode.RUN_ABORTED } });
        await eventually(() => cancelled.length === 1, 5000);
        expect(cancelled[0]).toMatchObject({ code: ErrorCode.RUN_ABORTED });

        // Another tool's cancels are not its to hear, and a tool worker may not send cancels.
        const other = Subject.cancel(Subject.tool(PREFIX, 'refund_order'));
        toolLookup.nc.subscribe(other);
        await violation(toolLookup, 'subscription', other);
        const forged = Subject.cancel(Subject.tool(PREFIX, 'lookup_order'));
        tool.transport.publish(forged, {});
        await violation(tool, 'publish', forged);
        expect([...core.errors].filter(isPermissionError)).toEqual([]);
        const refusedCancels = toolLookup.errors.filter((error) => error instanceof PermissionViolationError && error.subject.endsWith('.cancel'));
        expect(refusedCancels.map((error) => (error as PermissionViolationError).subject)).toEqual([other]);
      } finally {
        served.unsubscribe();
      }
    });

    it('should serve only its own tool', async () => {
      const subject = Subject.tool(PREFIX, 'refund_order');
      let calls = 0;
      toolLookup.transport.serve(subject, () => ++calls);
      await violation(toolLookup, 'subscription', subject);
      await eventually(() => toolLookup.logLines.some((line) => line.includes(subject) && /permissions violation/i.test(line)));
      const reply = await core.transport.request(subject, {}, { timeoutMs: 2000 });
      expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_NO_RESPONDER } });
      expect(calls).toBe(0);
    });
  });
});
