// The inspector from the command line, as real processes (the built CLI: `npm run build` first):
// `redflow run --inspect`, `redflow inspect <log>` to a receiver, and `redflow inspect` serving
// its relay to a page. The receiver is a real WebSocket server standing in for the inspector.
import { existsSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createReplayCursor, replayMessages } from '../../src/inspect/index.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import {
  EMBEDDED_ENV,
  ORDER_STATUS_FLOW as FLOW,
  ORDER_STATUS_STATES,
  connectAsPage,
  eventually,
  expectReplayOf,
  startCli,
  startReceiver,
  statesOf,
  tempDir,
  type Receiver,
} from './inspectSupport.js';

beforeAll(() => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

/** Runs order-status once and returns its log's path and events. */
async function finishedRun(traceId: string): Promise<{ dir: string; logPath: string; events: readonly AgentEvent[] }> {
  const { dir, remove } = await tempDir();
  cleanups.push(remove);
  const logPath = path.join(dir, `${traceId}.jsonl`);
  await (await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId, logPath })).finished();
  const { events, problems } = await readJsonlLog(logPath);
  expect(problems).toEqual([]);
  return { dir, logPath, events };
}

/** What the wire carries for a message: JSON, without undefined members. */
const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('redflow run --inspect (a real process)', () => {
  it('sends the live run to --inspect-url, prints the answer as usual, and exits once all is sent', async () => {
    const r = await receiver();
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const result = await runCli(['run', FLOW, '--input', 'Where is A-1001?', '--trace-id', 'cli-live-1', '--inspect', '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.stderr).toContain(`inspector: sending to ${r.url}`);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Order A-1001 shipped');
    expect(statesOf(r.messages, 'cli-live-1')).toEqual(ORDER_STATUS_STATES);
    expect(r.messages.filter((m) => m.type === '@xstate.actor').map((m) => m.sessionId)).toEqual(['cli-live-1', 'cli-live-1/transport']);
  });

  it("with its relay: says the inspector is a hosted page, and exits once the page has the run", async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const cli = startCli(['run', FLOW, '--input', 'Where is A-1001?', '--trace-id', 'cli-page-1', '--inspect', '--inspect-port', '0', '--no-open'], dir);
    cleanups.push(() => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    await eventually(() => /inspector: http:\/\/127\.0\.0\.1:\d+ \(open it in a browser\)/.test(cli.stderr()), 10_000, 'the relay to be ready');
    expect(cli.stderr()).toContain('the Stately inspector is a hosted page (it loads from stately.ai): the browser needs internet access');
    expect(cli.stderr()).toContain("Redflow's own editor: `redflow serve`");
    const pageUrl = /inspector: (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stderr())?.[1] as string;
    const page = await connectAsPage(pageUrl);
    cleanups.push(() => page.close());
    await eventually(() => statesOf(page.messages, 'cli-page-1').length === ORDER_STATUS_STATES.length, 10_000, 'the run on the page');
    // What the relay's page says once the hosted inspector listens.
    page.socket.send(JSON.stringify({ type: '@redflow.page', inspector: 'loaded' }));
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toContain('Order A-1001 shipped');
    expect(cli.stderr()).toContain(`inspector: ${pageUrl} received the run`);
    expect(statesOf(page.messages, 'cli-page-1')).toEqual(ORDER_STATUS_STATES);
  }, 30_000);

  it('with its relay and no page that opens: exits on its own after a bounded wait, saying how to see the run later', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const cli = startCli(['run', FLOW, '--input', 'Where is A-1001?', '--trace-id', 'cli-no-page-1', '--inspect', '--inspect-port', '0', '--no-open'], dir);
    cleanups.push(() => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    const exited = await Promise.race([cli.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 40_000))]);
    expect(exited).toBe(0);
    expect(cli.stdout()).toContain('Order A-1001 shipped');
    expect(cli.stderr()).toMatch(/inspector: no page opened http:\/\/127\.0\.0\.1:\d+ within 15 s of the run's end; `redflow inspect cli-no-page-1` shows the run again/);
  }, 60_000);

  it('names a new trace id itself, so the inspector session is the run log\'s', async () => {
    const r = await receiver();
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const result = await runCli(['run', FLOW, '--input', 'Where is A-1001?', '--json', '--inspect', '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(0);
    const { traceId } = JSON.parse(result.stdout) as { traceId: string };
    expect(r.messages[0]?.sessionId).toBe(traceId);
  });

  it('an unreachable inspector stops the command before the run: INSPECT_UNAVAILABLE, exit 69, no log', async () => {
    const r = await startReceiver();
    await r.close();
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const result = await runCli(['run', FLOW, '--input', 'x', '--inspect', '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(69);
    expect(result.stderr).toContain('error INSPECT_UNAVAILABLE');
    expect(result.stderr).toContain('hint:');
    expect(existsSync(path.join(dir, '.redflow'))).toBe(false);
  });

  it('inspector flags without --inspect, or contradicting each other, are usage errors', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const alone = await runCli(['run', FLOW, '--inspect-url', 'ws://127.0.0.1:9'], { cwd: dir, env: EMBEDDED_ENV });
    expect(alone.code).toBe(64);
    expect(alone.stderr).toContain('--inspect-url needs --inspect');
    const both = await runCli(['run', FLOW, '--inspect', '--inspect-url', 'ws://127.0.0.1:9', '--inspect-port', '9000'], { cwd: dir, env: EMBEDDED_ENV });
    expect(both.code).toBe(64);
    const notWs = await runCli(['run', FLOW, '--inspect', '--inspect-url', 'http://127.0.0.1:9'], { cwd: dir, env: EMBEDDED_ENV });
    expect(notWs.code).toBe(64);
    expect(notWs.stderr).toContain('WebSocket URL');
  });
});

describe('redflow inspect (a real process)', () => {
  it('replays a JSONL log to --inspect-url, says what it sent, and exits 0', async () => {
    const { dir, logPath, events } = await finishedRun('cli-replay-1');
    const r = await receiver();
    const result = await runCli(['inspect', logPath, '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`sent run cli-replay-1 to the inspector: ${events.length} events, ${1 + 2 * events.length} messages`);
    expect(result.stdout).toContain(`to ${r.url}`);
    expectReplayOf(r.messages, events);
  });

  it("replays a fork with its lineage: each snapshot's context from run.forked on names its parent and fork point, and the command says how to see the parent", async () => {
    const { dir, logPath } = await finishedRun('cli-fork-parent');
    const forkLog = path.join(dir, 'fork.jsonl');
    const fork = await runCli(['fork', logPath, '--at', '2', '--answer', '2={"action":"final","message":"Shipped with FastShip.","confidence":0.9}', '--log', forkLog], { cwd: dir, env: EMBEDDED_ENV });
    expect(fork.code, fork.stderr).toBe(0);
    const { events } = await readJsonlLog(forkLog);
    const r = await receiver();
    const result = await runCli(['inspect', forkLog, '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`a fork of run cli-fork-parent at iteration 2: redflow inspect ${logPath} shows its parent`);
    expectReplayOf(r.messages, events);
    const contexts = r.messages.filter((m) => m.type === '@xstate.snapshot').map((m) => (m.snapshot as { context: { forkOf?: unknown } }).context);
    expect(contexts[0]?.forkOf).toBeUndefined();
    for (const context of contexts.slice(1)) expect(context.forkOf).toMatchObject({ parent: { traceId: 'cli-fork-parent', log: logPath }, atIteration: 2 });
    // The same when followed event by event, as on a cluster.
    const cursor = createReplayCursor();
    expect(events.flatMap((event) => cursor.next(event))).toEqual(replayMessages(events));
    const json = await runCli(['inspect', forkLog, '--inspect-url', r.url, '--json'], { cwd: dir, env: EMBEDDED_ENV });
    expect(JSON.parse(json.stdout)).toMatchObject({ traceId: events[0]?.traceId, forkOf: { parent: { traceId: 'cli-fork-parent' }, atIteration: 2 } });
  });

  it('finds a trace id in .redflow/runs, and prints JSON with --json', async () => {
    const { dir, events } = await finishedRun('cli-replay-2');
    await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId: 'by-id-1', logPath: path.join(dir, '.redflow', 'runs', 'by-id-1.jsonl') }).then((run) =>
      run.finished(),
    );
    const r = await receiver();
    const result = await runCli(['inspect', 'by-id-1', '--inspect-url', r.url, '--json'], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      traceId: 'by-id-1',
      events: events.length,
      messages: 1 + 2 * events.length,
      problems: [],
      socketUrl: r.url,
      pageUrl: null,
    });
    expect(r.messages[0]?.sessionId).toBe('by-id-1');
  });

  it('a damaged log: the problem is reported, the events before it are sent, exit 65', async () => {
    const { dir, logPath, events } = await finishedRun('cli-damaged-1');
    const lines = (await readFile(logPath, 'utf8')).split('\n');
    // Line 4 gets a wrong checksum: a record in the middle that cannot be trusted.
    lines[3] = `00000000${lines[3]!.slice(8)}`;
    await writeFile(logPath, lines.join('\n'));
    const r = await receiver();
    const result = await runCli(['inspect', logPath, '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(65);
    expect(result.stderr).toContain('line 4: LOG_RECORD_CORRUPT');
    expectReplayOf(r.messages, events.slice(0, 3));
    expect(r.messages.at(-1)?.snapshot?.status).toBe('active');
  });

  it('a torn last record is reported but is no error: exit 0', async () => {
    const { dir, logPath, events } = await finishedRun('cli-torn-1');
    await appendFile(logPath, '1234abcd {"half a rec');
    const r = await receiver();
    const result = await runCli(['inspect', logPath, '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('LOG_RECORD_TORN');
    expectReplayOf(r.messages, events);
  });

  it('bad inputs: each a clear error with its code and exit code, and nothing sent', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const r = await receiver();
    const missing = await runCli(['inspect', 'nope.jsonl', '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(missing.code).toBe(66);
    expect(missing.stderr).toContain('error LOG_NOT_FOUND');
    const unknownId = await runCli(['inspect', 'no-such-run', '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(unknownId.code).toBe(66);
    expect(unknownId.stderr).toMatch(/error LOG_NOT_FOUND: .*\.redflow\/runs\/no-such-run\.jsonl/);
    expect(unknownId.stderr).toContain('hint:');
    await writeFile(path.join(dir, 'empty.jsonl'), '');
    const empty = await runCli(['inspect', 'empty.jsonl', '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(empty.code).toBe(65);
    expect(empty.stderr).toContain('error LOG_EMPTY');
    const noArg = await runCli(['inspect'], { cwd: dir, env: EMBEDDED_ENV });
    expect(noArg.code).toBe(64);
    const badPort = await runCli(['inspect', 'x.jsonl', '--inspect-port', 'eighty'], { cwd: dir, env: EMBEDDED_ENV });
    expect(badPort.code).toBe(64);
    expect(badPort.stderr).toContain('--inspect-port must be a port number');
    expect(r.messages).toEqual([]);
  });

  it('an inspector that is not there: INSPECT_UNAVAILABLE with a hint, exit 69', async () => {
    const { dir, logPath } = await finishedRun('cli-unreachable-1');
    const r = await startReceiver();
    await r.close();
    const result = await runCli(['inspect', logPath, '--inspect-url', r.url], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(69);
    expect(result.stderr).toContain(`error INSPECT_UNAVAILABLE: cannot reach the inspector at ${r.url}`);
    expect(result.stderr).toContain('hint:');
  });

  it("the relay's port taken: INSPECT_UNAVAILABLE naming the port, exit 69", async () => {
    const { dir, logPath } = await finishedRun('cli-port-taken-1');
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as net.AddressInfo).port;
    const result = await runCli(['inspect', logPath, '--inspect-port', String(port), '--no-open'], { cwd: dir, env: EMBEDDED_ENV });
    expect(result.code).toBe(69);
    expect(result.stderr).toContain(`error INSPECT_UNAVAILABLE: cannot start the inspector relay: port ${port} on 127.0.0.1 is in use`);
    expect(result.stderr).toContain('--inspect-port');
  });
});

describe('redflow inspect with its relay (a real process)', () => {
  it('serves the replay to the page until Ctrl-C, then exits 0', async () => {
    const { dir, logPath, events } = await finishedRun('cli-relay-1');
    const cli = startCli(['inspect', logPath, '--inspect-port', '0', '--no-open'], dir);
    cleanups.push(() => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    await eventually(() => /Ctrl-C stops the relay/.test(cli.stderr()), 10_000, 'the relay to be ready');
    const pageUrl = /open (http:\/\/127\.0\.0\.1:\d+) to step through it/.exec(cli.stdout())?.[1];
    expect(pageUrl).toBeDefined();
    expect(cli.stdout()).toContain(`sent run cli-relay-1 to the inspector: ${events.length} events`);
    const page = await connectAsPage(pageUrl!);
    cleanups.push(() => page.close());
    await eventually(() => page.messages.length === 1 + 2 * events.length, 5000, 'the replay');
    expect(page.messages).toEqual(replayMessages(events).map(wire));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });

  it('says the inspector is a hosted page, and says so again when its page cannot load it, while it serves', async () => {
    const { dir, logPath } = await finishedRun('cli-relay-offline-1');
    const cli = startCli(['inspect', logPath, '--inspect-port', '0', '--no-open'], dir);
    cleanups.push(() => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    await eventually(() => /Ctrl-C stops the relay/.test(cli.stderr()), 10_000, 'the relay to be ready');
    expect(cli.stderr()).toContain('the Stately inspector is a hosted page (it loads from stately.ai)');
    const pageUrl = /open (http:\/\/127\.0\.0\.1:\d+) to step through it/.exec(cli.stdout())?.[1] as string;
    const page = await connectAsPage(pageUrl);
    cleanups.push(() => page.close());
    // What the relay's page says when the hosted inspector has not answered in time.
    page.socket.send(JSON.stringify({ type: '@redflow.page', inspector: 'unavailable' }));
    await eventually(() => cli.stderr().includes('the browser could not load the hosted Stately inspector (stately.ai): check its internet access'), 10_000, 'the warning');
    expect(cli.stderr()).toContain("Redflow's own editor: `redflow serve`, open the run");
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });
});
