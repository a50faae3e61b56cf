// The runs under way in a run host, against the real statechart, actors and memory store: a run
// launched is known with its events until it ends, parks when it waits and is resumed by an answer
// through the same host, is aborted under way or parked, and is stopped by endRuns.
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { ErrorCode, RedflowError, errorInfo } from '../../src/errors.js';
import { AgentEventType, type AgentEvent } from '../../src/events/eventTypes.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { pendingWait } from '../../src/events/pendingWait.js';
import { RunHost } from '../../src/host/runHost.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import type { RunResult } from '../../src/runtime/runSession.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

/** An echo tool whose call waits, once entered, until it is released (or its call is cancelled). */
function gatedTool(name: string) {
  let entered!: () => void;
  let release!: () => void;
  const gate = { entered: new Promise<void>((resolve) => (entered = resolve)), release: () => release() };
  const opened = new Promise<void>((resolve) => (release = resolve));
  const { tool } = countingTool(name, async () => {
    entered();
    await opened;
    return { echoed: 'late' };
  });
  return { ...gate, tool };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A host whose runs use one echo tool (approved first when `approval`), their logs in memory. */
function hostWith(options: { approval?: boolean; lettingGoMs?: number; now?: () => number; tool?: ReturnType<typeof countingTool>['tool'] } = {}) {
  const echo = countingTool();
  const actors = serveActors({ model: createScriptedModel([answer.tool('echo', { text: 'hi' }), answer.final('done')]), tools: [options.tool ?? echo.tool] });
  closers.push(() => actors.close());
  const store = createMemoryEventStore();
  const env = { ...actors, agent: agentConfig(options.approval === true ? { requiresApproval: ['echo'] } : {}), store };
  const results: Promise<RunResult>[] = [];
  /** The run's end as the host sees it: after its log is let go of (`lettingGoMs`). */
  const finishedOf = (result: Promise<RunResult>) => result.finally(() => new Promise((resolve) => setTimeout(resolve, options.lettingGoMs ?? 0)));
  const host: RunHost = new RunHost({
    read: async (traceId) => {
      const { events } = await store.read(traceId).catch(() => ({ events: [] as AgentEvent[] }));
      return events.length === 0 ? undefined : events;
    },
    resume: ({ traceId, events, answer: taken }) =>
      void host.launch(
        traceId,
        ({ record }) => {
          const handle = resumeRun({ ...env, events, answer: taken, onEvent: record });
          results.push(handle.result);
          return { handle, finished: finishedOf(handle.result) };
        },
        events,
      ),
    closedError: () => new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'closing')),
    ...(options.now !== undefined && { now: options.now }),
  });
  closers.push(async () => {
    host.close();
    await host.endRuns({ abort: 'test over' });
  });
  const launch = (traceId: string) =>
    host.launch(traceId, ({ record }) => {
      const handle = startRun({ ...env, input: 'go', traceId, onEvent: record });
      results.push(handle.result);
      return { handle, finished: finishedOf(handle.result) };
    });
  return { host, echo, results, launch, logged: async (traceId: string) => (await store.read(traceId)).events };
}

describe('RunHost.launch', () => {
  it('should know a run with its events while it is under way, and forget it once it has ended', async () => {
    const { host, launch, results } = hostWith();
    const run = await launch('r1');
    expect(host.running()).toEqual(['r1']);
    await run.settled;
    expect(host.live('r1')).toBeUndefined();
    expect(run.events.map((event) => event.type)).toContain(AgentEventType.RunCompleted);
    await expect(results[0]).resolves.toMatchObject({ outcome: { status: 'done', answer: 'done' } });
  });

  it('should leave nothing behind when the launch throws', async () => {
    const { host } = hostWith();
    await expect(
      host.launch('bad', () => {
        throw new Error('no actors');
      }),
    ).rejects.toThrow('no actors');
    expect(host.running()).toEqual([]);
  });

  it('should park a run that waits, and resume it with an answer through the same host', async () => {
    const { host, launch, echo, results, logged } = hostWith({ approval: true });
    const run = await launch('w1');
    await run.settled;
    expect(host.live('w1')).toBeUndefined();
    await expect(host.answer('w1', { kind: 'approval', approved: true })).resolves.toBe('answered');
    await expect(results[1]).resolves.toMatchObject({ outcome: { status: 'done' } });
    expect(echo.calls).toEqual([{ text: 'hi' }]);
    expect((await logged('w1')).at(-1)?.type).toBe(AgentEventType.RunCompleted);
  });

  it('should take an answer that comes while the run is letting go of its log, once it is parked', async () => {
    const { host, launch, results } = hostWith({ approval: true, lettingGoMs: 300 });
    const run = await launch('w2');
    // The wait is logged; the run has not let go of its log yet.
    await expect.poll(() => pendingWait(run.events)).toBeDefined();
    expect(host.live('w2')).toBeDefined();
    await expect(host.answer('w2', { kind: 'approval', approved: true })).resolves.toBe('answered');
    await expect(results[1]).resolves.toMatchObject({ outcome: { status: 'done' } });
  });

  it('should refuse an answer to a run under way that does not wait, with RUN_NOT_WAITING', async () => {
    const gate = gatedTool('echo');
    const { host, launch } = hostWith({ tool: gate.tool });
    await launch('u1');
    await gate.entered;
    await expect(host.answer('u1', { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
    gate.release();
  });

  it('should end the waits of parked runs at their deadlines by the clock it is given', async () => {
    let now = Date.now();
    const { host, launch, results } = hostWith({ approval: true, now: () => now });
    await (await launch('w3')).settled;
    // Long before the wait's deadline (a day) by the real clock, but past it by the host's.
    now += 2 * 24 * 60 * 60 * 1000;
    await expect(host.answer('w3', { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.WAIT_EXPIRED });
    await expect(results[1]).resolves.toMatchObject({ outcome: { status: 'blocked', reason: 'wait_expired' } });
  });
});

describe('RunHost.abort', () => {
  it('should abort a run under way, and say finished once it has ended', async () => {
    const gate = gatedTool('echo');
    const { host, launch, results } = hostWith({ tool: gate.tool });
    const run = await launch('a1');
    await gate.entered;
    await expect(host.abort('a1', 'no longer needed')).resolves.toBe('aborting');
    await expect(results[0]).resolves.toMatchObject({ outcome: { status: 'blocked', reason: 'aborted' } });
    await run.settled;
    await expect(host.abort('a1', 'again')).resolves.toBe('finished');
    await expect(host.abort('nobody', 'why')).resolves.toBe('unknown');
  });

  it('should abort a parked run by taking the abort as the answer to its wait', async () => {
    const { host, launch, results, echo } = hostWith({ approval: true });
    await (await launch('a2')).settled;
    await expect(host.abort('a2', 'changed my mind')).resolves.toBe('aborting');
    await expect(results[1]).resolves.toMatchObject({ outcome: { status: 'blocked', reason: 'aborted' } });
    expect(echo.calls).toEqual([]);
  });

  it('should abort a run whose launch is still under way, through the signal it was given', async () => {
    const { host } = hostWith();
    let signal: AbortSignal | undefined;
    let go!: () => void;
    const started = host.launch('a3', async (ports) => {
      signal = ports.signal;
      await new Promise<void>((resolve) => (go = resolve));
      return { handle: { abort: () => undefined, stop: () => undefined }, finished: Promise.resolve() };
    });
    await expect.poll(() => signal).toBeDefined();
    await expect(host.abort('a3', 'too slow')).resolves.toBe('aborting');
    expect(signal?.aborted).toBe(true);
    go();
    await (await started).settled;
  });
});

describe('RunHost.endRuns', () => {
  it('should stop every run under way without recording an ending, and wait until each has let go', async () => {
    const gate = gatedTool('echo');
    const { host, launch, results, logged } = hostWith({ tool: gate.tool });
    await launch('s1');
    await gate.entered;
    host.close();
    await host.endRuns('stop');
    expect(host.running()).toEqual([]);
    await expect(results[0]).rejects.toMatchObject({ code: ErrorCode.RUN_STOPPED });
    expect((await logged('s1')).map((event) => event.type)).not.toContain(AgentEventType.RunFailed);
    await expect(launch('s2')).rejects.toMatchObject({ code: ErrorCode.SERVER_CLOSING });
  });
});
