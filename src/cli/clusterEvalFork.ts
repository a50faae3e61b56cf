import { writeFile } from 'node:fs/promises';
import type { NatsConnection } from '../nats/index.js';
import type { EvalFork } from '../evals/seamTypes.js';
import { encodeJsonlLog } from '../events/jsonlEventStore.js';
import { beginsWait } from '../events/pendingWait.js';
import { forkOnCluster } from '../nats/cluster/clusterFork.js';
import { openTraceToRead } from '../nats/cluster/openTraceToRead.js';

/**
 * The eval runs of `redflow eval --nats`: each case's eval run is a fork on the cluster (its log in
 * the trace stream, a core worker runs it), and once it has ended or parked, a copy of its stored
 * log is written where the report says it is, so the report reads the same as without a cluster.
 *
 * @example
 * ```ts
 * const report = await runEvalSuite({ suite: 'evals/orders', seam: 'all', fork: clusterEvalFork(nc, 'redflow') });
 * ```
 */
export function clusterEvalFork(nc: NatsConnection, prefix: string): EvalFork {
  return async ({ logPath, from, ...plan }) => {
    let parked: () => void = () => undefined;
    const waiting = new Promise<void>((resolve) => (parked = resolve));
    const fork = await forkOnCluster({ ...plan, from: { log: from }, nc, prefix, onEvent: (event) => (beginsWait(event) ? parked() : undefined) });
    try {
      // A fork parked on an approval or an answer is scored as it stands, as a run of this process is.
      await Promise.race([fork.result, waiting]);
    } finally {
      fork.detach();
    }
    const store = await openTraceToRead(nc, prefix);
    try {
      await writeFile(logPath, encodeJsonlLog((await store.read(fork.traceId)).events), { flag: 'wx' });
    } finally {
      await store.close();
    }
  };
}
