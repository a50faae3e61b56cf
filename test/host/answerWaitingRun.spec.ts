// The library's answerWaitingRun, which takes its answer through the run host (takeAnswer), against
// the real statechart, actors, and the memory and JSONL stores: an answer on time, one past the
// wait's deadline (the run takes the expiry and the call rejects with WAIT_EXPIRED), one of the
// wrong kind, and the same answer given twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { ErrorCode } from '../../src/errors.js';
import type { EventStore } from '../../src/events/eventStore.js';
import { openJsonlEventStore } from '../../src/events/jsonlEventStore.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { answerWaitingRun, settleRun } from '../../src/host/answerWaitingRun.js';
import { systemClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const stores: [string, () => Promise<EventStore>][] = [
  ['memory', async () => createMemoryEventStore()],
  [
    'JSONL',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'redflow-answer-'));
      const store = await openJsonlEventStore(path.join(dir, 'w.jsonl'));
      closers.push(async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      });
      return store;
    },
  ],
];

const WAIT_MS = 60_000;

/** A run parked in an approval of its first echo call (it makes two), on a clock the test moves. */
async function parkedRun(openStore: () => Promise<EventStore>) {
  const echo = countingTool();
  const model = createScriptedModel([answer.tool('echo', { text: 'one' }), answer.tool('echo', { text: 'two' }), answer.final('done')]);
  const actors = serveActors({ model, tools: [echo.tool] });
  closers.push(() => actors.close());
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const clock = { ...systemClock, now: () => now };
  const store = await openStore();
  const env = { ...actors, agent: agentConfig({ requiresApproval: ['echo'], waitTimeoutMs: WAIT_MS }), store, clock };
  const parked = await settleRun(startRun({ ...env, input: 'go', traceId: 'w' }));
  expect(parked).toMatchObject({ kind: 'waiting', wait: { kind: 'approval', idempotencyKey: 'w:1' } });
  const logged = async () => (await store.read('w')).events;
  const types = async () => (await logged()).map((event) => event.type);
  return { env, echo, logged, types, later: (ms: number) => void (now += ms) };
}

describe.each(stores)('answerWaitingRun with the %s store', (_name, openStore) => {
  it('should resume the run with an answer in time and run it on to its next wait', async () => {
    const run = await parkedRun(openStore);
    run.later(WAIT_MS - 1);
    const settled = await settleRun(await answerWaitingRun({ ...run.env, traceId: 'w', answer: { kind: 'approval', approved: true } }));
    expect(settled).toMatchObject({ kind: 'waiting', wait: { kind: 'approval', idempotencyKey: 'w:2' } });
    expect(run.echo.calls).toEqual([{ text: 'one' }]);
    expect(await run.types()).toContain('tool.approved');
  });

  it('should reject an answer past the deadline with WAIT_EXPIRED once the run has ended blocked, without the call', async () => {
    const run = await parkedRun(openStore);
    run.later(WAIT_MS + 1);
    await expect(answerWaitingRun({ ...run.env, traceId: 'w', answer: { kind: 'approval', approved: true } })).rejects.toMatchObject({
      code: ErrorCode.WAIT_EXPIRED,
    });
    // Ended already when the call rejects: the log says so at once.
    const events = await run.logged();
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { status: 'blocked', reason: 'wait_expired', error: { code: ErrorCode.WAIT_EXPIRED } } } });
    expect(events.map((event) => event.type)).not.toContain('tool.approved');
    expect(run.echo.calls).toEqual([]);
    await expect(answerWaitingRun({ ...run.env, traceId: 'w', answer: { kind: 'approval', approved: true } })).rejects.toMatchObject({
      code: ErrorCode.RUN_ALREADY_FINISHED,
    });
  });

  it('should refuse an answer of the wrong kind with RUN_NOT_WAITING, recording nothing', async () => {
    const run = await parkedRun(openStore);
    const before = await run.types();
    await expect(answerWaitingRun({ ...run.env, traceId: 'w', answer: { kind: 'client', result: { ok: true, output: 1 } } })).rejects.toMatchObject({
      code: ErrorCode.RUN_NOT_WAITING,
    });
    expect(await run.types()).toEqual(before);
  });

  it('should refuse the same answer given twice with WAIT_ALREADY_ANSWERED, recording nothing the second time', async () => {
    const run = await parkedRun(openStore);
    const first = { kind: 'approval', approved: true, idempotencyKey: 'w:1' } as const;
    await settleRun(await answerWaitingRun({ ...run.env, traceId: 'w', answer: first }));
    const before = await run.types();
    await expect(answerWaitingRun({ ...run.env, traceId: 'w', answer: first })).rejects.toMatchObject({ code: ErrorCode.WAIT_ALREADY_ANSWERED });
    expect(await run.types()).toEqual(before);
    expect(run.echo.calls).toEqual([{ text: 'one' }]);
  });
});
