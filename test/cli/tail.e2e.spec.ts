import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { endingWithin, killAll, startRedflow, type RedflowProcess } from '../distributed/workerProcess.js';
import { asRun, recordedRun } from '../events/followContract.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';

// `redflow tail <traceId>` (the built dist/) against the nats-server on 127.0.0.1:4222: the run's
// log is written by the test through a JetStream store, as a core worker writes it.

const prefix = uniquePrefix();
let nc: NatsConnection;
let store: JetStreamEventStore;
let template: readonly AgentEvent[];
const processes: RedflowProcess[] = [];

beforeAll(async () => {
  nc = await connectTestServer('tail-e2e');
  store = await openJetStreamEventStore(nc, { prefix, storage: 'memory' });
  template = await recordedRun();
});

afterAll(async () => {
  await killAll(processes);
  await (await jetstreamManager(nc)).streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
});

/** `redflow tail <args>` with what it prints on standard output. */
function tail(...args: string[]) {
  const started = startRedflow(['tail', ...args, '--nats', NATS_URL, '--prefix', prefix]);
  processes.push(started);
  let stdout = '';
  started.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return { ...started, stdout: () => stdout, events: () => stdout.split('\n').filter(Boolean).map((text) => JSON.parse(text) as AgentEvent) };
}

describe('redflow tail <traceId>', () => {
  it("should print a finished run's events, each once and in order, and exit 0 at its end", async () => {
    const run = asRun(template, 'tail-finished');
    for (const event of run) await store.append(event);
    const whole = tail('tail-finished', '--json');
    expect(await endingWithin(whole, 20_000)).toEqual({ code: 0, signal: null });
    expect(whole.events()).toEqual(run);
    const rest = tail('tail-finished', '--after', '5', '--json');
    expect(await endingWithin(rest, 20_000)).toEqual({ code: 0, signal: null });
    expect(rest.events()).toEqual(run.slice(5));
  }, 60_000);

  it('should wait for a run that has not started, print its events as they are stored, and exit 0 at its end', async () => {
    const run = asRun(template, 'tail-live');
    const live = tail('tail-live');
    await live.waitFor('following run tail-live');
    for (const event of run.slice(0, 4)) await store.append(event);
    await expect.poll(() => live.stdout().split('\n').filter(Boolean).length, { timeout: 10_000 }).toBe(4);
    expect(live.stdout()).toContain('tail-live #1 run.started');
    for (const event of run.slice(4)) await store.append(event);
    expect(await endingWithin(live, 20_000)).toEqual({ code: 0, signal: null });
    expect(live.stdout().split('\n').filter(Boolean).map((text) => /#(\d+) /.exec(text)?.[1])).toEqual(run.map((event) => String(event.seq)));
  }, 60_000);

  it('should stop following a run under way at Ctrl-C, exit 0', async () => {
    const run = asRun(template, 'tail-stopped');
    for (const event of run.slice(0, 3)) await store.append(event);
    const stopped = tail('tail-stopped', '--json');
    await expect.poll(() => stopped.events().length, { timeout: 10_000 }).toBe(3);
    stopped.child.kill('SIGINT');
    expect(await endingWithin(stopped, 10_000)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('should refuse --after without a trace id, or one that is not a whole number, as a usage error', async () => {
    const alone = tail('--after', '3');
    expect((await endingWithin(alone, 20_000)) as { code: number }).toMatchObject({ code: 64 });
    expect(alone.stderr()).toMatch(/--after needs a trace id/);
    const negative = tail('some-run', '--after', '1.5');
    expect((await endingWithin(negative, 20_000)) as { code: number }).toMatchObject({ code: 64 });
    expect(negative.stderr()).toMatch(/--after must be a whole number/);
  }, 60_000);
});
