import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestRunAbort } from '../../src/nats/cluster/runAborts.js';
import { REPO_ROOT } from '../support/cli.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// Ctrl-C on `redflow run --nats` (and `fork --nats`, which follows the same way) stops following, not the run: the
// command exits 130 and says how to follow it again, and the run goes on on the cluster (here it
// is still in its tool call, and answers an abort). Real processes against the real NATS.

const SLOW = path.join(REPO_ROOT, 'test', 'fixtures', 'slow', 'flow.json');
const prefix = uniquePrefix();
const processes: RedflowProcess[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-run-interrupt-'));
  const worker = startRedflow(['worker', SLOW, '--nats', NATS_URL, '--prefix', prefix]);
  processes.push(worker);
  await worker.ready();
}, 60_000);

afterAll(async () => {
  await killAll(processes);
  await rm(dir, { recursive: true, force: true });
});

describe('Ctrl-C while following a run on the cluster', () => {
  it('should exit 130, say the run goes on and how to follow it, and leave the run running', async () => {
    const nc = await connectTestServer('run-interrupt-test');
    try {
      // The run's tool call, live on its trace subject: the run is under way on the cluster.
      const toolCalls = nc.subscribe(`${prefix}.trace.*.tool.requested`, { max: 1 });
      const cli = startRedflow(['run', SLOW, '--nats', NATS_URL, '--prefix', prefix, '--input', 'wait']);
      processes.push(cli);
      let traceId = '';
      for await (const message of toolCalls) traceId = message.subject.split('.').at(-3) ?? '';
      expect(traceId).toMatch(/^[\w-]+$/);
      cli.child.kill('SIGINT');
      const ending = await cli.ended;
      expect(ending.code, cli.stderr()).toBe(130);
      expect(cli.stderr()).toContain(`stopped following run ${traceId}; it goes on on the cluster (redflow tail ${traceId})`);
      // Still running there: its core worker takes the abort (a finished run would not).
      await expect(requestRunAbort(nc, prefix, traceId, { reason: 'test over' })).resolves.toMatchObject({ kind: 'aborting' });
    } finally {
      await nc.drain();
    }
  }, 60_000);
});
