// A finished run's log replayed into the Stately inspector, programmatically, received on a real
// WebSocket server (`redflow inspect` as a real process is in inspectCli.e2e.spec.ts).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createReplayCursor, openInspectSession, reactMachineDefinition, replayMessages } from '../../src/inspect/index.js';
import { ReactState } from '../../src/machines/reactState.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { ORDER_STATUS_FLOW as FLOW, expectReplayOf, startReceiver, tempDir, type Receiver } from './inspectSupport.js';

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
