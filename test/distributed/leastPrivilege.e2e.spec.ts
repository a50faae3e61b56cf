import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_ANSWER } from '../cli/cliHarness.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startNatsServer, type PrivateNatsServer } from '../nats/natsSupport.js';
import { startReceiver } from '../inspect/inspectSupport.js';
import { call, waitForRun } from '../server/serverHarness.js';
import { endingWithin, killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// The real `redflow worker` and `redflow run --nats` processes under deploy/nats/redflow.conf as
// shipped, on a private nats-server: each role connects as the user the README gives it, and
// must start, serve and stop without the server refusing anything it does.

const CONFIG = path.join(REPO_ROOT, 'deploy', 'nats', 'redflow.conf');
const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');
// nats-server reads an environment value starting with a digit as a number: start with a letter.
const password = () => `p${randomBytes(12).toString('hex')}`;
const passwords = { core: password(), client: password(), model: password(), tool: password(), tool_lookup: password() };
type User = keyof typeof passwords;

let dir: string;
let server: PrivateNatsServer;
/** What the server logs: it reports every refused publish or subscription ("… Violation …"). */
let serverLog = '';
const processes: RedflowProcess[] = [];

/** The refusals the server logged since `from` (an offset in its log). */
const violationsSince = (from: number) => serverLog.slice(from).split('\n').filter((line) => /violation/i.test(line));

/** The NATS flags of a process connecting as `user`, with its own inbox prefix (model workers make no requests). */
function as(user: User): string[] {
  return [
    '--nats', server.url, '--nats-user', user, '--nats-password', passwords[user],
    ...(user === 'model' ? [] : ['--nats-inbox-prefix', `_INBOX_${user}`]),
  ];
}

function worker(roles: string, user: User): RedflowProcess {
  const started = startRedflow(['worker', FLOW, '--role', roles, ...as(user)]);
  processes.push(started);
  return started;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-least-privilege-'));
  server = await startNatsServer(CONFIG, {
    REDFLOW_NATS_STORE_DIR: path.join(dir, 'jetstream'),
    REDFLOW_CORE_PASSWORD: passwords.core,
    REDFLOW_CLIENT_PASSWORD: passwords.client,
    REDFLOW_MODEL_PASSWORD: passwords.model,
    REDFLOW_TOOL_PASSWORD: passwords.tool,
    REDFLOW_TOOL_LOOKUP_PASSWORD: passwords.tool_lookup,
  });
  server.process.stderr?.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
});

afterAll(async () => {
  await killAll(processes);
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('redflow worker under deploy/nats/redflow.conf', () => {
  it.each([
    ['core', 'core'],
    ['memory', 'core'],
    ['core,memory', 'core'],
    ['model', 'model'],
    ['tool', 'tool'],
  ] as const)('should start, serve and stop --role %s as user %s', async (roles, user) => {
    const from = serverLog.length;
    const started = worker(roles, user);
    await started.ready();
    started.child.kill('SIGTERM');
    expect(await endingWithin(started, 15_000)).toEqual({ code: 0, signal: null });
    expect(started.stderr()).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    expect(violationsSince(from)).toEqual([]);
  }, 30_000);

  it('should run a flow end to end: core and memory as core, model as model, tools as tool, the client as client', async () => {
    const from = serverLog.length;
    const workers = [worker('core,memory', 'core'), worker('model', 'model'), worker('tool', 'tool')];
    await Promise.all(workers.map((started) => started.ready()));
    const run = await runCli(['run', FLOW, ...as('client'), '--input', 'Where is order A-1001?', '--conversation', 'least-privilege-1', '--json'], {
      cwd: dir,
      timeoutMs: 30_000,
    });
    expect(run.stderr).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { outcome: { answer: string }; envelope: { tools: { history: { status: string }[] } } };
    expect(report.outcome.answer).toBe(ORDER_ANSWER);
    expect(report.envelope.tools.history.map((call) => call.status)).toEqual(['succeeded', 'succeeded']);
    for (const started of workers) {
      started.child.kill('SIGTERM');
      expect(await endingWithin(started, 15_000)).toEqual({ code: 0, signal: null });
      expect(started.stderr()).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    }
    expect(violationsSince(from)).toEqual([]);
  }, 60_000);

  it('should let the client user follow (tail), replay and inspect runs, run them from `redflow serve --nats`, and refuse a taken --trace-id at once (exit 65)', async () => {
    const from = serverLog.length;
    const workers = [worker('core,memory', 'core'), worker('model', 'model'), worker('tool', 'tool')];
    await Promise.all(workers.map((started) => started.ready()));
    const tail = startRedflow(['tail', 'least-privilege-client-1', ...as('client'), '--json']);
    processes.push(tail);
    let tailed = '';
    tail.child.stdout?.on('data', (chunk: Buffer) => (tailed += chunk.toString()));
    await expect.poll(() => tail.stderr(), { timeout: 10_000 }).toContain('following');

    const cli = (args: string[]) => runCli(args, { cwd: dir, timeoutMs: 30_000 });
    const run = await cli(['run', FLOW, ...as('client'), '--input', 'Where is order A-1001?', '--trace-id', 'least-privilege-client-1', '--json']);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { outcome: { answer: string } }).outcome.answer).toBe(ORDER_ANSWER);
    // tail printed every event of the run as it happened.
    await expect.poll(() => tailed.split('\n').filter((line) => line.includes('"run.completed"')).length, { timeout: 10_000 }).toBe(1);
    // Without --json, `redflow run --nats` also follows the answers' pieces (redflow.runs.chunk.*) for its status line.
    const shown = await cli(['run', FLOW, ...as('client'), '--input', 'Where is order A-1001?']);
    expect(shown.code).toBe(0);
    expect(shown.stdout.trim()).toBe(ORDER_ANSWER);
    const replay = await cli(['replay', 'least-privilege-client-1', ...as('client'), '--json']);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain(ORDER_ANSWER);
    const receiver = await startReceiver();
    try {
      const inspected = await cli(['inspect', 'least-privilege-client-1', ...as('client'), '--inspect-url', receiver.url]);
      expect(inspected.code).toBe(0);
    } finally {
      await receiver.close();
    }

    // `redflow serve --nats` (the editor's API) starts, lists and reads runs as the client user.
    const serve = startRedflow(['serve', '--flows', path.join(REPO_ROOT, 'examples'), '--port', '0', ...as('client')]);
    processes.push(serve);
    let served = '';
    serve.child.stdout?.on('data', (chunk: Buffer) => (served += chunk.toString()));
    const listening = /redflow serve: http:\/\/127\.0\.0\.1:(\d+)\//;
    await expect.poll(() => listening.test(served + serve.stderr()), { timeout: 15_000 }).toBe(true);
    const api = { port: Number(listening.exec(served + serve.stderr())?.[1]) };
    const started = await call(api, 'POST', '/api/runs', { body: { flow: 'order-status/flow', input: 'Where is order A-1001?' } });
    expect(started.status, started.text).toBe(201);
    const { traceId } = started.json as { traceId: string };
    await waitForRun(api, traceId, (run) => run.status === 'finished', 20_000);
    const listed = await call(api, 'GET', '/api/runs?limit=5');
    expect((listed.json as { runs: { traceId: string }[] }).runs.map((entry) => entry.traceId)).toContain(traceId);

    // The trace id is taken: refused with a code, nothing run, no hanging.
    const again = await cli(['run', FLOW, ...as('client'), '--input', 'again', '--trace-id', 'least-privilege-client-1']);
    expect(again.code).toBe(65);
    expect(again.stderr).toContain('RUN_TRACE_ID_TAKEN');

    tail.child.kill('SIGTERM');
    expect(await endingWithin(tail, 15_000)).toEqual({ code: 0, signal: null });
    for (const started of workers) started.child.kill('SIGTERM');
    serve.child.kill('SIGTERM');
    for (const started of [...workers, tail, serve]) {
      await endingWithin(started, 15_000);
      expect(started.stderr()).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    }
    for (const result of [run, shown, replay, again]) expect(result.stderr).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    expect(violationsSince(from)).toEqual([]);
  }, 90_000);

  it('should run a flow with a tool.mcp (examples/mcp-filesystem): the tool worker runs the MCP server and lists its tools to the core as user tool', async () => {
    const from = serverLog.length;
    const mcpFlow = path.join(REPO_ROOT, 'examples', 'mcp-filesystem', 'flow.json');
    const hosted = (roles: string, user: User) => {
      const started = startRedflow(['worker', mcpFlow, '--role', roles, ...as(user)]);
      processes.push(started);
      return started;
    };
    // The tool worker first: the core worker asks it for the server's tools as it starts.
    const tools = hosted('tool', 'tool');
    await tools.ready();
    const workers = [tools, hosted('core,memory', 'core'), hosted('model', 'model')];
    await Promise.all(workers.map((started) => started.ready()));
    const run = await runCli(['run', mcpFlow, ...as('client'), '--input', 'What is on my shopping list?', '--json'], { cwd: dir, timeoutMs: 60_000 });
    expect(run.stderr).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { outcome: { answer: string }; envelope: { tools: { history: { tool: string; status: string }[] } } };
    expect(report.outcome.answer).toContain('milk, bread and coffee beans');
    expect(report.envelope.tools.history.map((call) => [call.tool, call.status])).toEqual([
      ['fs_list_directory', 'succeeded'],
      ['fs_read_text_file', 'succeeded'],
    ]);
    for (const started of workers) started.child.kill('SIGTERM');
    for (const started of workers) {
      expect(await endingWithin(started, 15_000)).toEqual({ code: 0, signal: null });
      expect(started.stderr()).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    }
    expect(violationsSince(from)).toEqual([]);
  }, 120_000);

  it('should run a flow with a subagent (examples/subagents, its researcher on the prefix redflow.agent-researcher) with each role as its user, and replay the tree as the client', async () => {
    const from = serverLog.length;
    const subagentFlow = path.join(REPO_ROOT, 'examples', 'subagents', 'flow.json');
    const hosted = (roles: string, user: User) => {
      const started = startRedflow(['worker', subagentFlow, '--role', roles, ...as(user)]);
      processes.push(started);
      return started;
    };
    const workers = [hosted('core,memory', 'core'), hosted('model', 'model'), hosted('tool', 'tool')];
    await Promise.all(workers.map((started) => started.ready()));
    const cli = (args: string[]) => runCli(args, { cwd: dir, timeoutMs: 60_000 });
    const run = await cli(['run', subagentFlow, ...as('client'), '--input', 'Where is order A-1001?', '--trace-id', 'least-privilege-subagent-1', '--json']);
    expect(run.stderr).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { outcome: { status: string }; envelope: { tools: { history: { status: string; childTraceId?: string }[] } } };
    expect(report.outcome.status).toBe('done');
    expect(report.envelope.tools.history).toEqual([expect.objectContaining({ status: 'succeeded', childTraceId: 'least-privilege-subagent-1-1' })]);

    const tree = await cli(['replay', 'least-privilege-subagent-1', '--tree', ...as('client')]);
    expect(tree.code, tree.stderr).toBe(0);
    // The subagent's run is read from its own stream, which the client user may read.
    expect(tree.stdout).toMatch(/researcher → run least-privilege-subagent-1-1 +done \(final_answer\)/);

    for (const started of workers) started.child.kill('SIGTERM');
    for (const started of workers) {
      expect(await endingWithin(started, 15_000)).toEqual({ code: 0, signal: null });
      expect(started.stderr()).not.toMatch(/permissions? violation|PERMISSION_DENIED/i);
    }
    expect(violationsSince(from)).toEqual([]);
  }, 120_000);
});
