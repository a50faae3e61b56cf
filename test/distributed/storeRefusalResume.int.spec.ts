import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix, closedAfterAll } from './clusterSupport.js';

// A run whose append the trace stream refuses (or does not take within the append timeout) stops
// with LOG_STORE_UNAVAILABLE. Its record still names its live worker, so no other worker would
// ever take it over: its own worker resumes it from its log once the stream takes writes again.
// (Seen in CI: a leader stepping down answered an append "raft: not leader" and the run was left
// unfinished.)

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const { closers, connection } = closedAfterAll();

describe('a run stopped by its store while its worker lives', () => {
  it('should be resumed by its worker once the trace stream takes its writes again', async () => {
    const prefix = uniquePrefix();
    const client = await connection('refusal-client');
    closers.unshift(() => removePrefix(client, prefix));
    const actors = await startActorWorker({ nc: await connection('refusal-actors'), flowPath, prefix, roles: ['model', 'tool'] });
    closers.push(() => actors.close());
    const said: string[] = [];
    const core = await startCoreWorker({ nc: await connection('refusal-core'), flowPath, prefix, owner: 'refusal-core', leaseMs: 1500, log: (line) => said.push(line) });
    closers.push(() => core.close());
    process.env.SLOW_BUMP_MS = '1500';
    const jsm = await jetstreamManager(client);
    const stream = Storage.traceStream(prefix);
    try {
      const run = await startRemoteRun({ nc: client, prefix, input: 'go' });
      // While the first tool call runs, the stream stops taking messages as large as its next write.
      await nextEvent(client, prefix, run.traceId, 'tool.requested');
      const { config } = await jsm.streams.info(stream);
      await jsm.streams.update(stream, { ...config, max_msg_size: 64 });
      await expect.poll(() => said.join('\n'), { timeout: 15_000 }).toContain(`run ${run.traceId} left: ${ErrorCode.LOG_STORE_UNAVAILABLE}`);
      await jsm.streams.update(stream, { ...config, max_msg_size: -1 });

      const { outcome } = await run.result;

      expect(outcome.reason).toBe('final_answer');
      expect(said.join('\n')).toContain(`run ${run.traceId}: its record still names this worker, resuming it from its log`);
    } finally {
      delete process.env.SLOW_BUMP_MS;
    }
  }, 60_000);
});

/** Resolves with the next event of `type` published live for a run. */
async function nextEvent(nc: NatsConnection, prefix: string, traceId: string, type: string): Promise<void> {
  const sub = nc.subscribe(Subject.trace(prefix, traceId, type), { max: 1 });
  for await (const _message of sub) return;
  throw new Error(`no ${type} for run ${traceId}`);
}
