// `redflow serve --a2a`: a flow served as an A2A agent, called with the A2A SDK's own client
// (ClientFactory, JSON-RPC): send, stream, get, cancel, a question answered by a second message on
// the task, and the token. A task is a run: its id is the run's trace id, and the API shows it.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { call, tempDirs } from './serverHarness.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';

const TOKEN = 'a2a-test-token';
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let server: RedflowServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ask = { action: 'escalate', input: { reason: 'over the limit', question: 'May I refund 120 EUR?' } };

const serverDirs = new WeakMap<RedflowServer, { flowsDir: string; runsDir: string }>();

/** A server with `--a2a` and a token, serving the flows given by id. */
async function serve(flows: Record<string, unknown[]>): Promise<RedflowServer> {
  const root = await dirs.make('redflow-a2a-');
  const flowsDir = path.join(root, 'flows');
  const runsDir = path.join(root, 'runs');
  for (const [id, answers] of Object.entries(flows)) await writeWaitingFlow(flowsDir, waitingFlow(answers, { requiresApproval: [] }, id), `${id}.json`);
  const backend = createEmbeddedRunBackend({ flowsDir, runsDir, env: {}, sweepMs: 50, fsync: 'never' });
  server = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend, token: TOKEN, a2a: true });
  serverDirs.set(server, { flowsDir, runsDir });
  return server;
}

const withToken: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('Authorization', `Bearer ${TOKEN}`);
  return fetch(input, { ...init, headers });
};

/** The SDK's client for a flow's agent, reading its card from the well-known path. */
async function clientOf(s: RedflowServer, flowId: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
    }),
  );
  return factory.createFromUrl(`${s.url}a2a/${flowId}/`);
}

function userMessage(text: string, taskId = ''): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

async function send(client: Client, text: string, taskId = ''): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: userMessage(text, taskId), configuration: undefined, metadata: undefined });
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${JSON.stringify(result)}`);
  return result;
}

/** The run as the API shows it (a task's answer is published once its run's ending is in the log). */
async function runOf(s: RedflowServer, traceId: string): Promise<unknown> {
  return (await call(s, 'GET', `/api/runs/${traceId}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json;
}

const textOf = (message: Message | undefined) => message?.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

describe('a flow served as an A2A agent', () => {
  it('should publish the flow card at the well-known path, without a token', async () => {
    const s = await serve({ answers: [waitAnswer.final('hello')] });
    const card = await new DefaultAgentCardResolver().resolve(`${s.url}a2a/answers/`);
    expect(card.name).toBe('answers');
    expect(card.skills[0]?.id).toBe('answers');
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${s.url}a2a/answers`, protocolBinding: 'JSONRPC' });
    expect(card.capabilities?.streaming).toBe(true);
  });

  it('should refuse a JSON-RPC call without the token with 401', async () => {
    const s = await serve({ answers: [waitAnswer.final('hello')] });
    const refused = await call(s, 'POST', '/a2a/answers', { body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } } });
    expect(refused.status).toBe(401);
    expect(refused.error?.code).toBe('HTTP_UNAUTHORIZED');
  });

  it('should run a task to its answer, as a run the API shows under the task id', async () => {
    const s = await serve({ answers: [waitAnswer.final('the order ships Monday')] });
    const client = await clientOf(s, 'answers');
    const task = await send(client, 'Where is order A-1001?');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message)).toBe('the order ships Monday');
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'the order ships Monday' });
    const run = await runOf(s, task.id);
    expect(run).toMatchObject({ traceId: task.id, flow: 'answers', outcome: { status: 'done', answer: 'the order ships Monday' } });
    const got = await client.getTask({ tenant: '', id: task.id });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('should stream a task from submitted through working to completed', async () => {
    const s = await serve({ answers: [waitAnswer.final('streamed')] });
    const client = await clientOf(s, 'answers');
    const states: TaskState[] = [];
    for await (const event of client.sendMessageStream({ tenant: '', message: userMessage('go'), configuration: undefined, metadata: undefined })) {
      if (event.payload?.$case === 'task') states.push(event.payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
      if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
    }
    expect(states).toEqual([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  it("should ask the model's question as input-required and take the next message as its answer", async () => {
    const s = await serve({ asks: [ask, waitAnswer.final('refunded')] });
    const client = await clientOf(s, 'asks');
    const waiting = await send(client, 'refund A-1');
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(waiting.status?.message)).toBe('May I refund 120 EUR?');

    const done = await send(client, 'yes, refund it', waiting.id);
    expect(done.id).toBe(waiting.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done.status?.message)).toBe('refunded');
    const events = await call(s, 'GET', `/api/runs/${waiting.id}/events`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const answered = (events.json as { events: { type: string; data: { answer?: string } }[] }).events.find((e) => e.type === 'human.answered');
    expect(answered?.data.answer).toBe('yes, refund it');
  });

  it('should cancel a waiting task by aborting its run', async () => {
    const s = await serve({ asks: [ask, waitAnswer.final('refunded')] });
    const client = await clientOf(s, 'asks');
    const waiting = await send(client, 'refund A-2');
    const canceled = await client.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const run = await runOf(s, waiting.id);
    expect(run).toMatchObject({ outcome: { status: 'blocked', reason: 'aborted' } });
  });

  it('should let a client subscribe to a waiting task and see it go on when it is answered', async () => {
    const s = await serve({ asks: [ask, waitAnswer.final('refunded')] });
    const client = await clientOf(s, 'asks');
    const waiting = await send(client, 'refund A-3');
    const seen: TaskState[] = [];
    const subscribed = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: waiting.id })) {
        if (event.payload?.$case === 'statusUpdate') seen.push(event.payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
      }
    })();
    const done = await send(client, 'yes', waiting.id);
    await subscribed;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(seen).toEqual(expect.arrayContaining([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]));
  });

  it('should read a task back from its run log after the server restarts', async () => {
    const s = await serve({ answers: [waitAnswer.final('kept in the log')] });
    const task = await send(await clientOf(s, 'answers'), 'remember this');
    const { flowsDir, runsDir } = serverDirs.get(s) ?? { flowsDir: '', runsDir: '' };
    await s.close();
    server = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(runsDir, 'editor'), port: 0, env: {}, token: TOKEN, a2a: true });
    const got = await (await clientOf(server, 'answers')).getTask({ tenant: '', id: task.id });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'kept in the log' });
  });

  it('should refuse an unknown flow, a path out of the flows folder, a wrong method and a body that is not JSON-RPC with coded errors', async () => {
    const s = await serve({ answers: [waitAnswer.final('x')] });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const rpc = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } };
    expect((await call(s, 'POST', '/a2a/nope', { body: rpc, headers: auth })).status).toBe(404);
    expect((await call(s, 'GET', '/a2a/nope/.well-known/agent-card.json')).status).toBe(404);
    expect((await call(s, 'POST', '/a2a/..%2F..%2Fetc', { body: rpc, headers: auth })).status).toBe(400);
    expect((await call(s, 'GET', '/a2a/answers', { headers: auth })).status).toBe(405);
    const notJson = await call(s, 'POST', '/a2a/answers', { rawBody: '{', headers: { ...auth, 'content-type': 'application/json' } });
    expect(notJson.error?.code).toBe('HTTP_BODY_NOT_JSON');
    const unknown = await call(s, 'POST', '/a2a/answers', { body: { jsonrpc: '2.0', id: 2, method: 'NoSuchMethod', params: {} }, headers: { ...auth, 'A2A-Version': '1.0' } });
    expect((unknown.json as { error: { code: number } }).error.code).toBe(-32601);
    const noTask = await call(s, 'POST', '/a2a/answers', { body: rpc, headers: { ...auth, 'A2A-Version': '1.0' } });
    expect((noTask.json as { error: { code: number } }).error.code).toBe(-32001);
  });

  it('should refuse a message on a task that is not one of its runs', async () => {
    const s = await serve({ answers: [waitAnswer.final('x')] });
    const client = await clientOf(s, 'answers');
    await expect(send(client, 'hello', 'no-such-task')).rejects.toThrow(/not found/i);
  });
});
