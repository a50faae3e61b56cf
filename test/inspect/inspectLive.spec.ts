// A live run fed to the Stately inspector: the messages are received on a real WebSocket server,
// as the inspector's relay would receive them.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { openInspectSession } from '../../src/inspect/index.js';
import { ReactState } from '../../src/machines/reactState.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { ORDER_STATUS_FLOW as FLOW, ORDER_STATUS_STATES, startReceiver, statesOf, tempDir, type Receiver } from './inspectSupport.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

describe('a live run in the inspector', () => {
  it('registers the REACT actor under the trace id, then sends its events and every state it passes through', async () => {
    const r = await receiver();
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const session = await openInspectSession({ url: r.url });
    cleanups.push(() => session.close());
    const traceId = 'live-1';
    const run = await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId, logPath: path.join(dir, 'run.jsonl'), inspect: session.inspectRun(traceId) });
    const result = await run.finished();
    await session.close();
    expect(result.outcome.status).toBe('done');
    const { messages } = r;

    // The actor registrations come first: the machine, with its definition, and its transport.
    const root = messages.find((m) => m.type === '@xstate.actor' && m.sessionId === traceId);
    expect(root).toBeDefined();
    expect(root?.name).toBe('react');
    type Definition = { states?: Record<string, Definition> };
    const definition = JSON.parse(root?.definition ?? '{}') as Definition & { id: string; initial: string };
    const leaves = (states: Record<string, Definition>): string[] => Object.entries(states).flatMap(([name, node]) => (node.states ? leaves(node.states) : [name]));
    expect(definition.id).toBe('react');
    expect(definition.initial).toBe(ReactState.Starting);
    expect(leaves(definition.states ?? {}).sort()).toEqual(Object.values(ReactState).sort());
    const transport = messages.find((m) => m.type === '@xstate.actor' && m.sessionId === `${traceId}/transport`);
    expect(transport?.parentId).toBe(traceId);
    expect(messages.indexOf(root!)).toBe(0);
    // No XState-internal session id (x:0, x:1) leaks out.
    expect(messages.filter((m) => /^x:\d+$/.test(m.sessionId) || /^x:\d+$/.test(m.rootId ?? ''))).toEqual([]);

    // Its states, each microstep included: validating and checkingStop are transient, yet shown.
    expect(statesOf(messages, traceId)).toEqual(ORDER_STATUS_STATES);
    const last = messages.filter((m) => m.type === '@xstate.snapshot' && m.sessionId === traceId).at(-1);
    expect(last?.snapshot?.status).toBe('done');

    // The events the machine received, from its transport actor, and those it sent to it.
    const toMachine = messages.filter((m) => m.type === '@xstate.event' && m.sessionId === traceId).map((m) => m.event?.type);
    expect(toMachine).toEqual(['xstate.init', 'model.answer', 'tool.result', 'model.answer', 'tool.result', 'model.answer']);
    const answers = messages.filter((m) => m.type === '@xstate.event' && m.event?.type === 'model.answer');
    expect(answers.every((m) => m.sourceId === `${traceId}/transport`)).toBe(true);
    const toTransport = messages.filter((m) => m.type === '@xstate.event' && m.sessionId === `${traceId}/transport`).map((m) => m.event?.type);
    expect(toTransport).toEqual(['xstate.init', 'model.request', 'tool.request', 'model.request', 'tool.request', 'model.request']);

    // The context is data: the envelope (the fold of the log), not the rules or the host's effects.
    const context = last?.snapshot?.context as { envelope: unknown; settings: Record<string, unknown> };
    // (timeoutMs and resume are unset in this run, so absent.)
    expect(Object.keys(context.settings).sort()).toEqual(['agent', 'traceId']);
    const { events } = await readJsonlLog(path.join(dir, 'run.jsonl'));
    expect(context.envelope).toEqual(JSON.parse(JSON.stringify(fold(events))));
  });

  it('keeps runs apart: two runs at once, each under its own trace id', async () => {
    const r = await receiver();
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const session = await openInspectSession({ url: r.url });
    cleanups.push(() => session.close());
    const runs = await Promise.all(
      ['both-a', 'both-b'].map((traceId) =>
        runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId, logPath: path.join(dir, `${traceId}.jsonl`), inspect: session.inspectRun(traceId) }),
      ),
    );
    await Promise.all(runs.map((run) => run.finished()));
    await session.close();
    expect(statesOf(r.messages, 'both-a')).toEqual(ORDER_STATUS_STATES);
    expect(statesOf(r.messages, 'both-b')).toEqual(ORDER_STATUS_STATES);
  });

  it('a receiver that is not there is INSPECT_UNAVAILABLE, with a hint, before any run', async () => {
    const r = await startReceiver();
    const url = r.url;
    await r.close();
    const error = await openInspectSession({ url, connectTimeoutMs: 2000 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.INSPECT_UNAVAILABLE);
    expect((error as RedflowError).message).toContain(url);
    expect((error as RedflowError).hint).toMatch(/--inspect-url/);
  });

  it('a receiver that goes away mid-run does not stop the run: it ends as it would, and the loss is reported once', async () => {
    const r = await receiver();
    // The receiver drops every connection as soon as the first message is in.
    r.onConnection = (socket) => socket.once('message', () => socket.terminate());
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const errors: RedflowError[] = [];
    const session = await openInspectSession({ url: r.url, onError: (error) => errors.push(error) });
    cleanups.push(() => session.close());
    const run = await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId: 'dropped-1', logPath: path.join(dir, 'run.jsonl'), inspect: session.inspectRun('dropped-1') });
    const result = await run.finished();
    await session.close();
    expect(result.outcome.status).toBe('done');
    expect(result.outcome.answer).toContain('A-1001');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.code).toBe(ErrorCode.INSPECT_UNAVAILABLE);
  });
});
