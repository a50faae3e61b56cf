// agent.a2a: a Redflow flow calls another Redflow flow served by `redflow serve --a2a` (in process,
// both with scripted models) as a tool, over the A2A SDK's JSON-RPC client. The remote's answer is
// the call's output; a failed remote task, an unreachable remote and an abort are coded errors, and
// an abort cancels the remote task (checked with the SDK's own client).
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { loadValidFlow } from '../../src/flows/loadValidFlow.js';
import { checkA2aAgents } from '../../src/runtime/a2aAgentCheck.js';
import { connectA2aAgent } from '../../src/actors/tools/a2aTool.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { tempDirs } from '../server/serverHarness.js';
import { ROOT, codeBlocks, readPage } from '../docs/docPages.js';

const dirs = tempDirs();
let root: string;
let remote: RedflowServer;
/** The same flows behind a token, as `redflow serve --a2a` with REDFLOW_TOKEN serves them. */
let guarded: RedflowServer;
const TOKEN = 'doc-token-1234';
/** A server that takes requests and never answers them: the remote flow's tool that is still working. */
let hanging: Server;
const arrived: IncomingMessage[] = [];

const tool = (name: string, input: unknown) => ({ action: 'tool', tool: name, input, confidence: 0.5 });
const final = (message: string) => ({ action: 'final', message, confidence: 0.9 });

/** A flow: an agent with a scripted model and the given capabilities, all connected to it. */
function flowOf(id: string, answers: readonly unknown[], capabilities: readonly Record<string, unknown>[] = []) {
  return {
    id,
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 4 } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers } },
      ...capabilities,
    ],
    edges: [
      { id: 'e-in', source: 'in', target: 'agent' },
      { id: 'e-model', source: 'agent', target: 'model' },
      ...capabilities.map((node) => ({ id: `e-${String(node.id)}`, source: 'agent', target: node.id })),
    ],
  };
}

async function write(file: string, flow: unknown): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(flow, null, 2));
  return file;
}

/** A caller flow whose model calls the remote agent `desk` with `task`, then answers with what it got. */
async function callerOf(name: string, url: string, extra: Record<string, unknown> = {}): Promise<string> {
  return write(
    path.join(root, 'callers', `${name}.json`),
    flowOf(name, [tool('desk', { task: 'Where is order A-1001?' }), final('relayed')], [{ id: 'desk', type: 'agent.a2a', config: { url, ...extra } }]),
  );
}

async function run(flowPath: string, traceId: string, signal?: AbortSignal, env: NodeJS.ProcessEnv = {}) {
  const events: AgentEvent[] = [];
  const started = await runFlowFile({
    flowPath,
    input: 'go',
    traceId,
    logPath: path.join(root, 'runs', `${traceId}.jsonl`),
    fsync: 'never',
    env,
    ...(signal && { signal }),
    onEvent: (event) => events.push(event),
  });
  return { result: await started.finished(), events };
}

const toolResults = (events: readonly AgentEvent[]) => events.filter((event) => event.type === 'tool.completed').map((event) => event.data);

beforeAll(async () => {
  root = await dirs.make('redflow-a2a-call-');
  hanging = createServer((request) => arrived.push(request));
  hanging.listen(0, '127.0.0.1');
  await once(hanging, 'listening');
  const port = (hanging.address() as { port: number }).port;
  const flowsDir = path.join(root, 'flows');
  // Each remote flow has a tool (an agent needs one); only `slow` calls it, and it never answers.
  const lookup = [{ id: 'lookup', type: 'tool.http', config: { url: `http://127.0.0.1:${port}/lookup`, timeoutMs: 600_000 } }];
  await write(path.join(flowsDir, 'desk.json'), flowOf('desk', [final('the order ships Monday')], lookup));
  // Its model asks for a tool the agent does not have: the run ends blocked, the task failed.
  await write(path.join(flowsDir, 'broken.json'), flowOf('broken', [tool('missing', {})], lookup));
  await write(path.join(flowsDir, 'slow.json'), flowOf('slow', [tool('lookup', {}), final('never')], lookup));
  const runsDir = path.join(root, 'remote-runs');
  const backend = createEmbeddedRunBackend({ flowsDir, runsDir, env: {}, sweepMs: 50, fsync: 'never' });
  remote = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend, a2a: true });
  const guardedRuns = path.join(root, 'guarded-runs');
  const guardedBackend = createEmbeddedRunBackend({ flowsDir, runsDir: guardedRuns, env: {}, sweepMs: 50, fsync: 'never' });
  guarded = await createRedflowServer({ flowsDir, runsDir: guardedRuns, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend: guardedBackend, a2a: true, token: TOKEN });
});

afterAll(async () => {
  await remote?.close();
  await guarded?.close();
  for (const request of arrived) request.socket.destroy();
  hanging?.close();
  await dirs.cleanup();
});

describe('a remote A2A agent called as a tool (agent.a2a)', () => {
  it("should send the task to the remote flow and give the model the remote task's answer", async () => {
    const flowPath = await callerOf('ok', `${remote.url}a2a/desk/`);
    const { result, events } = await run(flowPath, 'call-ok');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'relayed' });
    expect(events.find((event) => event.type === 'tool.requested')?.data).toMatchObject({ tool: 'desk', input: { task: 'Where is order A-1001?' } });
    expect(toolResults(events)).toEqual([expect.objectContaining({ ok: true, output: 'the order ships Monday' })]);
  });

  it('should run the node of docs/a2a.md, its token read from the environment, and the example that calls the refund desk should validate', async () => {
    const snippet = codeBlocks(readPage('docs/a2a.md')).find((block) => block.lang === 'json' && block.code.includes('"agent.a2a"'));
    const node = JSON.parse(snippet?.code ?? '{}') as { id: string; type: string; config: { url: string; headersFromEnv: Record<string, string> } };
    expect(node.config.url).toBe('http://127.0.0.1:4800/a2a/a2a-agent/flow/');
    const [variable] = Object.values(node.config.headersFromEnv);
    const flowPath = await write(
      path.join(root, 'callers', 'doc.json'),
      flowOf('doc', [tool(node.id, { task: 'Where is order A-1001?' }), final('relayed')], [{ ...node, config: { ...node.config, url: `${guarded.url}a2a/desk/` } }]),
    );
    // Without the token, the card is read (it is public) but the server refuses the call.
    const refused = await run(flowPath, 'call-doc-no-token', undefined, { [variable ?? '']: 'not-the-token' });
    expect(toolResults(refused.events)).toEqual([expect.objectContaining({ ok: false, error: expect.objectContaining({ code: ErrorCode.TOOL_FAILED }) })]);
    const { result, events } = await run(flowPath, 'call-doc', undefined, { [variable ?? '']: TOKEN });
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'relayed' });
    expect(toolResults(events)).toEqual([expect.objectContaining({ ok: true, output: 'the order ships Monday' })]);
    // The example's remote is the refund desk served on port 4800: here its file is checked only.
    const example = await loadValidFlow(path.join(ROOT, 'examples/a2a-pair/flow.json'));
    expect(example.flow.tools.map((planned) => [planned.name, planned.node.type])).toEqual([['refund_desk', 'agent.a2a']]);
  });

  it("should describe the tool to the model with the remote agent card's description, and take { task }", async () => {
    const card = await new ClientFactory().createFromUrl(`${remote.url}a2a/desk/`).then((client) => client.getAgentCard());
    const desk = await connectA2aAgent('desk', { url: `${remote.url}a2a/desk/.well-known/agent-card.json` });
    expect(card.description).not.toBe('');
    expect(desk.description).toBe(card.description);
    expect(desk.inputSchema).toMatchObject({ required: ['task'] });
  });

  it('should show the model a failed remote task as A2A_TASK_FAILED', async () => {
    const flowPath = await callerOf('fails', `${remote.url}a2a/broken/`);
    const { result, events } = await run(flowPath, 'call-fails');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'relayed' });
    expect(toolResults(events)).toEqual([expect.objectContaining({ ok: false, error: expect.objectContaining({ code: ErrorCode.A2A_TASK_FAILED }) })]);
  });

  it('should report an unreachable remote as A2A_AGENT_UNAVAILABLE in validation and at run start', async () => {
    const gone = createServer();
    gone.listen(0, '127.0.0.1');
    await once(gone, 'listening');
    const port = (gone.address() as { port: number }).port;
    gone.close();
    await once(gone, 'close');
    const flowPath = await callerOf('gone', `http://127.0.0.1:${port}/a2a/desk/`);
    const { flow } = await loadValidFlow(flowPath);
    const errors = await checkA2aAgents(flow, {});
    expect(errors).toEqual([expect.objectContaining({ code: ErrorCode.A2A_AGENT_UNAVAILABLE, nodeId: 'desk', hint: expect.stringContaining('url') })]);
    await expect(run(flowPath, 'call-gone')).rejects.toMatchObject({ code: ErrorCode.A2A_AGENT_UNAVAILABLE });
  });

  it('should refuse a token variable that is not set with TOOL_CONFIG_INVALID', async () => {
    const flowPath = await callerOf('no-token', `${remote.url}a2a/desk/`, { headersFromEnv: { Authorization: 'DESK_TOKEN' } });
    await expect(run(flowPath, 'call-no-token')).rejects.toMatchObject({ code: ErrorCode.TOOL_CONFIG_INVALID, message: expect.stringContaining('DESK_TOKEN') });
  });

  it('should cancel the remote task and fail the call with TOOL_TIMEOUT past timeoutMs', async () => {
    const flowPath = await callerOf('times-out', `${remote.url}a2a/slow/`, { timeoutMs: 500 });
    const working = once(hanging, 'request') as Promise<[IncomingMessage]>;
    const finished = run(flowPath, 'call-times-out');
    const [request] = await working;
    request.on('error', () => undefined);
    const remoteStopped = new Promise((resolve) => request.on('close', resolve));
    const { result, events } = await finished;
    // The model saw the timeout and answered on.
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'relayed' });
    expect(toolResults(events)).toEqual([expect.objectContaining({ ok: false, error: expect.objectContaining({ code: ErrorCode.TOOL_TIMEOUT }) })]);
    await remoteStopped;
  });

  it('should cancel the remote task when the calling run is aborted', async () => {
    const flowPath = await callerOf('aborted', `${remote.url}a2a/slow/`);
    const abort = new AbortController();
    const working = once(hanging, 'request') as Promise<[IncomingMessage]>;
    const finished = run(flowPath, 'call-aborted', abort.signal);
    // The remote task is under way once its own tool's request arrives here.
    const [request] = await working;
    // Its end is an 'aborted' error of the request as well as its close: only the close matters here.
    request.on('error', () => undefined);
    const remoteStopped = new Promise((resolve) => request.on('close', resolve));
    abort.abort();
    const { result } = await finished;
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    // The remote run lets go of its tool's request once its task is cancelled.
    await remoteStopped;
    const listed = (await (await fetch(`${remote.url}api/runs`)).json()) as { runs: { traceId: string; flow?: string }[] };
    const taskId = listed.runs.find((summary) => summary.flow === 'slow')?.traceId ?? '';
    const client = await new ClientFactory().createFromUrl(`${remote.url}a2a/slow/`);
    const task = await client.getTask({ tenant: '', id: taskId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
