import { stat } from 'node:fs/promises';
import type { ForkPlanOptions } from '../host/forkPlan.js';
import { requireJetStream } from '../nats/jetStreamNotEnabled.js';
import { forkOnCluster } from '../nats/cluster/clusterFork.js';
import { followOnCluster, type ClusterFollow } from './clusterFollow.js';
import type { ExitCode } from './exitCodes.js';
import { connectFromOptions, subjectPrefix } from './natsOptions.js';
import { line, styles, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { stopWithin } from './stopWithin.js';

/**
 * What `redflow fork --nats` needs: the fork (as `forkOnCluster` takes it) and how to print it.
 *
 * @example
 * ```ts
 * const options: ClusterForkCommandOptions = { from: 'order-a1001', at: 2, values: { nats: 'localhost:4222' }, json: false, output, progress };
 * ```
 */
export interface ClusterForkCommandOptions extends ForkPlanOptions {
  readonly from: string;
  readonly timeoutMs?: number;
  readonly values: Record<string, string | boolean | undefined>;
  readonly json: boolean;
  readonly output: Output;
  readonly progress: ReturnType<typeof createProgressPrinter>;
}

/**
 * `redflow fork <traceId|log> --at <n> --nats <url>`: stores the fork's log in the trace stream,
 * hands it to the cluster's core workers (a cluster run from then on), follows it live and prints
 * its outcome, as `redflow run --nats` does. Ctrl-C stops following; the fork goes on.
 *
 * @example
 * ```ts
 * const code = await forkOnClusterCommand({ from: 'order-a1001', at: 2, values, json: false, output, progress });
 * ```
 */
export async function forkOnClusterCommand(options: ClusterForkCommandOptions): Promise<ExitCode> {
  const { output, values, json, progress, from, ...plan } = options;
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-fork');
  const s = styles(output.color);
  let follow: ClusterFollow | undefined;
  try {
    await requireJetStream(nc);
    follow = followOnCluster({ nc, prefix, json, output, progress });
    // A file is a log to fork from; anything else a trace id in the stream.
    const isLog = await stat(from).then((found) => found.isFile(), () => false);
    const fork = await forkOnCluster({ ...plan, nc, prefix, from: isLog ? { log: from } : from, signal: follow.signal, onEvent: follow.onEvent });
    // Stored and handed over: a core worker's next takeover scan starts it (with none running, forkOnCluster refused it).
    if (!json) line(output.err, s.dim(`fork ${fork.traceId} of ${fork.parent.log ?? fork.parent.traceId} at iteration ${plan.at}, handed to the core workers of ${prefix}`));
    return await follow.toEnd(fork, { what: 'fork', footer: `redflow replay ${fork.traceId} --nats <url> --tree shows it under its parent`, json: { parent: fork.parent } });
  } finally {
    follow?.close();
    await stopWithin([], nc);
  }
}
