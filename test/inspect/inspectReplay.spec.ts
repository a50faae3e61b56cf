// A finished run's log replayed into the Stately inspector: programmatically and with
// `redflow inspect` as a real process, received on a real WebSocket server.
import { existsSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isTerminal, type AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runSteps } from '../../src/events/runSteps.js';
import { createReplayCursor, openInspectSession, reactMachineDefinition, replayMessages } from '../../src/inspect/index.js';
import { ReactState } from '../../src/machines/reactState.js';
import { runFlowFile } from '../../src/runtime/embeddedFlowRun.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { EMBEDDED_ENV, startReceiver, tempDir, type Receiver, type WireMessage } from './inspectSupport.js';

const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
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
  const run = await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId, logPath });
  await run.finished();
  const { events, problems } = await readJsonlLog(logPath);
  expect(problems).toEqual([]);
  return { dir, logPath, events };
}

/** Checks the messages are exactly the replay of `events`: actor, then event + snapshot per event, in order. */
function expectReplayOf(messages: readonly WireMessage[], events: readonly AgentEvent[]): void {
  const traceId = events[0]!.traceId;
  expect(messages).toHaveLength(1 + 2 * events.length);
  const [actor, ...rest] = messages;
  expect(actor?.type).toBe('@xstate.actor');
  expect(actor?.sessionId).toBe(traceId);
  expect(actor?.name).toBe('react');
  expect(actor?.definition).toBe(reactMachineDefinition());
  expect(actor?.snapshot?.value).toBe(ReactState.Starting);
  expect(actor?.createdAt).toBe(String(Date.parse(events[0]!.time)));
  const steps = runSteps(events);
  steps.forEach((step, index) => {
    const sent = rest[2 * index];
    const snapshot = rest[2 * index + 1];
    expect(sent?.type).toBe('@xstate.event');
    expect(sent?.sessionId).toBe(traceId);
    // The log event itself is the inspector's event, with its own time.
    expect(sent?.event).toEqual(JSON.parse(JSON.stringify(step.event)));
    expect(sent?.createdAt).toBe(String(Date.parse(step.event.time)));
    expect(snapshot?.type).toBe('@xstate.snapshot');
    expect(snapshot?.event?.seq).toBe(step.event.seq);
    expect(snapshot?.snapshot?.value).toBe(step.state);
    expect(snapshot?.snapshot?.context).toEqual({ envelope: JSON.parse(JSON.stringify(step.envelope)) });
    expect(snapshot?.snapshot?.status).toBe(isTerminal(step.event) ? 'done' : 'active');
  });
  const last = events.at(-1)!;
  if (isTerminal(last)) expect(rest.at(-1)?.snapshot?.output).toEqual(fold(events).observability.outcome);
}

const ORDER_STATUS_STEPS = [
  ReactState.Starting, // run.started
  ...[ReactState.AwaitingModel, ReactState.Validating, ReactState.AwaitingTool, ReactState.CheckingStop],
  ...[ReactState.AwaitingModel, ReactState.Validating, ReactState.AwaitingTool, ReactState.CheckingStop],
  ...[ReactState.AwaitingModel, ReactState.Validating, ReactState.Done],
];

describe('replaying a log into the inspector', () => {
  it('sends the actor with the REACT definition, then one event per log event in order, each with the state after it', async () => {
    const { events } = await finishedRun('replay-1');
    const r = await receiver();
    const session = await openInspectSession({ url: r.url });
    const summary = session.replay(events);
    await session.close();
    expect(summary).toEqual({ traceId: 'replay-1', events: events.length, messages: 1 + 2 * events.length });
    expectReplayOf(r.messages, events);
    expect(r.messages.filter((m) => m.type === '@xstate.snapshot').map((m) => m.snapshot?.value)).toEqual(ORDER_STATUS_STEPS);
  });

  it('follows a run event by event with the same messages as the whole-log replay', async () => {
    const { events } = await finishedRun('follow-1');
    const cursor = createReplayCursor();
    expect(events.flatMap((event) => cursor.next(event))).toEqual(replayMessages(events));
    const r = await receiver();
    const session = await openInspectSession({ url: r.url });
    const follow = session.follow();
    for (const event of events) follow(event);
    await session.close();
    expectReplayOf(r.messages, events);
  });

  it('an unfinished log ends on an active snapshot', async () => {
    const { events } = await finishedRun('cut-1');
    const cut = events.slice(0, 5);
    const messages = replayMessages(cut);
    expect(messages.at(-1)).toMatchObject({ type: '@xstate.snapshot', snapshot: { status: 'active', value: ReactState.CheckingStop } });
  });

  it('sends the same definition a live run registers, so both draw the same chart', async () => {
    const r = await receiver();
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const session = await openInspectSession({ url: r.url });
    const run = await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId: 'def-1', logPath: path.join(dir, 'run.jsonl'), inspect: session.inspectRun('def-1') });
    await run.finished();
    await session.close();
    const live = r.messages.find((m) => m.type === '@xstate.actor' && m.sessionId === 'def-1');
    expect(JSON.parse(live?.definition ?? 'null')).toEqual(JSON.parse(reactMachineDefinition()));
  });
});

describe('redflow inspect (a real process)', () => {
  beforeAll(() => {
    if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  });

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
