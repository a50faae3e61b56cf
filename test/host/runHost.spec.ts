// The run host's answer to a waiting run, against the real statechart, actors and memory store:
// on time, too late (the wait's expiry, WAIT_EXPIRED), an answer of the wrong kind, two answers at
// once, and the timer that ends a wait at its deadline.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { ErrorCode, RedflowError, errorInfo } from '../../src/errors.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { RunHost } from '../../src/host/runHost.js';
import { settleRun } from '../../src/host/answerWaitingRun.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import type { RunHandle } from '../../src/runtime/runSession.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A run parked in an approval of its echo call, and a host that resumes it in this process (reading the clock through `now`, which a test may fake). */
async function parkedRun(waitTimeoutMs = 60_000, now = () => Date.now()) {
  const echo = countingTool();
  const actors = serveActors({ model: createScriptedModel([answer.tool('echo', { text: 'hi' }), answer.final('done')]), tools: [echo.tool] });
  closers.push(() => actors.close());
  const store = createMemoryEventStore();
  const env = { ...actors, agent: agentConfig({ requiresApproval: ['echo'], waitTimeoutMs }), store };
  const parked = await settleRun(startRun({ ...env, input: 'go', traceId: 'w' }));
  expect(parked.kind).toBe('waiting');
  const resumed: RunHandle[] = [];
  const host = new RunHost({
    read: async (traceId) => {
      const { events } = await store.read(traceId).catch(() => ({ events: [] }));
      return events.length === 0 ? undefined : events;
    },
    resume: ({ events, answer: taken }) => void resumed.push(resumeRun({ ...env, events, answer: taken })),
    closedError: () => new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'closing')),
    now,
  });
  closers.push(async () => host.close());
  const logged = async () => (await store.read('w')).events;
  return { host, echo, resumed, logged, ended: async () => settleRun(resumed[0] as RunHandle) };
}

describe('RunHost.answer', () => {
  it('should resume a run with an answer in time, and the run should end with the call made', async () => {
    const run = await parkedRun();
    await expect(run.host.answer('w', { kind: 'approval', approved: true })).resolves.toBe('answered');
    const ended = await run.ended();
    expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'done', answer: 'done' } });
    expect(run.echo.calls).toEqual([{ text: 'hi' }]);
  });

  it('should refuse an answer past the deadline with WAIT_EXPIRED, and end the run blocked without the call', async () => {
    // The host's clock reads an hour on: the wait's deadline (50 ms after it was logged) is past.
    const run = await parkedRun(50, () => Date.now() + 3_600_000);
    await expect(run.host.answer('w', { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.WAIT_EXPIRED });
    const ended = await run.ended();
    expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'blocked', reason: 'wait_expired' } });
    expect(run.echo.calls).toEqual([]);
  });

  it('should refuse an answer of the wrong kind with RUN_NOT_WAITING, recording nothing', async () => {
    const run = await parkedRun();
    const before = await run.logged();
    await expect(run.host.answer('w', { kind: 'client', result: { ok: true, output: 1 } })).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
    expect(await run.logged()).toEqual(before);
    expect(run.resumed).toEqual([]);
  });

  it('should take one of two answers given at once, and refuse the other with WAIT_ALREADY_ANSWERED', async () => {
    const run = await parkedRun();
    const both = await Promise.allSettled([run.host.answer('w', { kind: 'approval', approved: true }), run.host.answer('w', { kind: 'approval', approved: false })]);
    expect(both.filter((one) => one.status === 'fulfilled')).toHaveLength(1);
    expect(both.find((one) => one.status === 'rejected')).toMatchObject({ reason: { code: ErrorCode.WAIT_ALREADY_ANSWERED } });
    await run.ended();
    // Once the run has taken its answer, a repeat finds the wait answered or the run ended.
    await expect(run.host.answer('w', { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.RUN_ALREADY_FINISHED });
    expect(run.resumed).toHaveLength(1);
  });

  it("should say 'unknown' for a run that has no log", async () => {
    const run = await parkedRun();
    await expect(run.host.answer('nobody', { kind: 'approval', approved: true })).resolves.toBe('unknown');
  });

  it('should end a parked wait at its deadline, and not before', async () => {
    const run = await parkedRun(150);
    // The host's timer and clock are faked from here: the deadline comes when the test says.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      run.host.park('w', Date.now() + 150);
      await vi.advanceTimersByTimeAsync(149);
      expect(run.resumed).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
    } finally {
      vi.useRealTimers();
    }
    await expect.poll(() => run.resumed.length).toBe(1);
    const ended = await run.ended();
    expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'blocked', reason: 'wait_expired' } });
  });

  it('should refuse answers once closed', async () => {
    const run = await parkedRun();
    run.host.close();
    await expect(run.host.answer('w', { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.SERVER_CLOSING });
  });
});
