import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix, closedAfterAll } from './clusterSupport.js';

// The lease of a prefix is the expiry of its heartbeat bucket, set by the first core worker. A
// later worker asking for a longer lease must still beat at the bucket's pace: beating at its own,
// its heartbeat would expire between beats and the other workers would take its runs from it.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
const { closers, connection } = closedAfterAll();

async function core(owner: string, leaseMs: number, log?: (line: string) => void): Promise<CoreWorker> {
  const worker = await startCoreWorker({ nc: await connection(owner), flowPath, prefix, owner, leaseMs, ...(log && { log }) });
  closers.push(() => worker.close());
  return worker;
}

describe('core workers asking for different leases on one prefix', () => {
  it('should keep a run with the worker that owns it when that worker asked for a longer lease than the bucket’s', async () => {
    const client = await connection('lease-client');
    closers.unshift(() => removePrefix(client, prefix));
    const actors = await startActorWorker({ nc: await connection('lease-actors'), flowPath, prefix, roles: ['model', 'tool'] });
    closers.push(() => actors.close());
    await core('lease-short', 600);
    const said: string[] = [];
    const long = await core('lease-long', 6000, (line) => said.push(line));
    expect(said.join('\n')).toContain('is 600 ms, set by its first core worker; 6000 ms is not used');

    process.env.SLOW_BUMP_MS = '700'; // each tool call outlasts the bucket's lease a little
    try {
      // Starts go to either worker (a queue group): keep starting until the long-lease one owns a run.
      for (let attempt = 0; attempt < 20; attempt++) {
        const run = await startRemoteRun({ nc: client, prefix, input: `go ${attempt}` });
        const ownedByLong = long.runs().includes(run.traceId);
        const { outcome } = await run.result;
        expect(outcome.reason).toBe('final_answer');
        if (!ownedByLong) continue;
        const { events } = await (await openJetStreamEventStore(client, { prefix })).read(run.traceId);
        // Nobody took it over: the owner's heartbeat never lapsed.
        expect(events.filter((event) => event.type === 'run.resumed')).toEqual([]);
        return;
      }
      throw new Error('the long-lease worker never got a run');
    } finally {
      delete process.env.SLOW_BUMP_MS;
    }
  }, 60_000);
});
