import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subject } from '../../src/actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../src/errors.js';
import type { ReadResult } from '../../src/events/eventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { followClusterRun } from '../../src/server/natsRunFollow.js';
import { answer, countingTool, runScripted } from '../support/harness.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';

// The follow algorithm against a real nats-server, with the stored log played by the test: live
// events are published by hand (duplicated, out of order, missing) and the store answers what
// the test says it holds at each moment.

let nc: NatsConnection;
let log: AgentEvent[];
const prefix = uniquePrefix();

beforeAll(async () => {
  nc = await connectTestServer('follow');
  const { events } = await runScripted({
    answers: [answer.tool('echo', { text: 'one' }), answer.tool('echo', { text: 'two' }), answer.final('done')],
    tools: [countingTool('echo').tool],
  });
  log = events;
});

afterAll(async () => {
  await nc.drain();
});

/** Publishes events on their live trace subjects, and waits until the server has them. */
async function publishLive(...events: (AgentEvent | undefined)[]): Promise<void> {
  for (const event of events) {
    if (event) nc.publish(Subject.trace(prefix, event.traceId, event.type), JSON.stringify(event));
  }
  await nc.flush();
}

/** A stored log that holds the first `stored.count` events of {@link log}. */
function storeHolding(count: number) {
  const stored = { count, reads: 0 };
  const read = async (traceId: string): Promise<ReadResult> => {
    stored.reads++;
    if (traceId !== log[0]?.traceId || stored.count === 0) {
      throw new RedflowError(errorInfo(ErrorCode.LOG_NOT_FOUND, `no events for run ${traceId}`));
    }
    return { events: log.slice(0, stored.count), problems: [] };
  };
  return { stored, read };
}

const seqs = (events: readonly AgentEvent[]) => events.map((event) => event.seq);
const all = () => log.map((event) => event.seq);

describe('following a cluster run', () => {
  it('should deliver the stored events, then the live ones, each once, in order', async () => {
    expect(log.length).toBeGreaterThanOrEqual(9);
    const { read } = storeHolding(4);
    const delivered: AgentEvent[] = [];
    let stopped = 0;
    const traceId = log[0]?.traceId as string;
    const stop = await followClusterRun({
      nc,
      prefix,
      traceId,
      afterSeq: 0,
      onEvent: (event) => delivered.push(event),
      read: async (id) => {
        // Events 3 to 5 go by live while the log is being read: 3 and 4 are stored, 5 is not yet.
        await publishLive(log[2], log[3], log[4]);
        return read(id);
      },
      onStop: () => stopped++,
    });
    await eventually(() => delivered.length === 5);
    expect(seqs(delivered)).toEqual([1, 2, 3, 4, 5]);
    // 5 again (a duplicate), then the rest.
    await publishLive(log[4], ...log.slice(5));
    await eventually(() => stopped === 1);
    expect(delivered).toEqual(log);
    stop();
    expect(stopped).toBe(1);
  });

  it('should start after the given seq', async () => {
    const { read } = storeHolding(6);
    const delivered: AgentEvent[] = [];
    let stopped = false;
    await followClusterRun({ nc, prefix, traceId: 'trace-1', afterSeq: 4, onEvent: (e) => delivered.push(e), read, onStop: () => (stopped = true) });
    expect(seqs(delivered)).toEqual([5, 6]);
    await publishLive(...log.slice(3));
    await eventually(() => stopped);
    expect(seqs(delivered)).toEqual(all().slice(4));
  });

  it('should fill a gap in the live events from the store', async () => {
    const { stored, read } = storeHolding(3);
    const delivered: AgentEvent[] = [];
    let stopped = false;
    await followClusterRun({ nc, prefix, traceId: 'trace-1', afterSeq: 0, onEvent: (e) => delivered.push(e), read, onStop: () => (stopped = true) });
    expect(seqs(delivered)).toEqual([1, 2, 3]);
    // Event 4 is lost on the way; 5 arrives. Both are in the store by then.
    stored.count = 5;
    await publishLive(log[4]);
    await eventually(() => delivered.length === 5);
    expect(seqs(delivered)).toEqual([1, 2, 3, 4, 5]);
    stored.count = log.length;
    await publishLive(...log.slice(3));
    await eventually(() => stopped);
    expect(delivered).toEqual(log);
  });

  it('should find a lost last event in the store when nothing more comes live', async () => {
    const { stored, read } = storeHolding(3);
    const delivered: AgentEvent[] = [];
    let stopped = false;
    await followClusterRun({
      nc,
      prefix,
      traceId: 'trace-1',
      afterSeq: 0,
      onEvent: (e) => delivered.push(e),
      read,
      idleCheckMs: 100,
      onStop: () => (stopped = true),
    });
    stored.count = log.length;
    await eventually(() => stopped, 3000);
    expect(delivered).toEqual(log);
  });

  it('should stop at once when the stored log has already ended before the given seq', async () => {
    const { read } = storeHolding(log.length);
    const delivered: AgentEvent[] = [];
    let stopped = false;
    await followClusterRun({ nc, prefix, traceId: 'trace-1', afterSeq: log.length, onEvent: (e) => delivered.push(e), read, onStop: () => (stopped = true) });
    expect(stopped).toBe(true);
    expect(delivered).toEqual([]);
  });

  it('should ignore live messages that are not events of this run', async () => {
    const { read } = storeHolding(2);
    const delivered: AgentEvent[] = [];
    await followClusterRun({ nc, prefix, traceId: 'trace-1', afterSeq: 0, onEvent: (e) => delivered.push(e), read });
    const subject = Subject.trace(prefix, 'trace-1', 'model.answered');
    nc.publish(subject, 'not json');
    nc.publish(subject, JSON.stringify({ seq: 3, type: 'model.answered' }));
    nc.publish(subject, JSON.stringify({ ...log[2], traceId: 'another-run' }));
    await nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seqs(delivered)).toEqual([1, 2]);
  });

  it('should reject for a run the store has never seen, and leave no subscription behind', async () => {
    const { read } = storeHolding(0);
    let stopped = false;
    await expect(
      followClusterRun({ nc, prefix, traceId: 'nobody', afterSeq: 0, onEvent: () => undefined, read, onStop: () => (stopped = true) }),
    ).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
    expect(stopped).toBe(true);
  });
});
