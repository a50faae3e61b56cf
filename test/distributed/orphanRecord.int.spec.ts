import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { openRunLeases } from '../../src/nats/cluster/runLeases.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix, closedAfterAll } from './clusterSupport.js';

// A core worker that dies between a run's record and its first event leaves a record and no log:
// the worker that finds it drops the record instead of holding it forever.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const { closers, connection } = closedAfterAll();

describe("a run's start on the cluster", () => {
  it('should have its record dropped by the next core worker when its worker died before its first event', async () => {
    const prefix = uniquePrefix();
    const client = await connection('orphan-client');
    closers.unshift(() => removePrefix(client, prefix));
    // A worker that registered a run and died before anything of it was stored.
    const dead = await openRunLeases(await connection('dead-core'), { prefix, owner: 'dead-core', leaseMs: 1000 });
    expect(await dead.register({ traceId: 'no-log', startedAt: new Date().toISOString() })).toBe(true);
    await dead.close();
    const lines: string[] = [];
    const core = await startCoreWorker({ nc: await connection('heir-core'), flowPath, prefix, owner: 'heir-core', leaseMs: 1000, log: (line) => lines.push(line) });
    closers.push(() => core.close());
    const runs = await new Kvm(client).open(Storage.runsBucket(prefix));
    const deadline = Date.now() + 10_000;
    while ((await runs.get('no-log'))?.operation === 'PUT') {
      if (Date.now() > deadline) throw new Error(`the record of the run with no log is still there; the worker said: ${lines.join(' | ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(core.runs()).toEqual([]);
    expect(lines.some((line) => line.includes('run no-log never started'))).toBe(true);
  });
});
