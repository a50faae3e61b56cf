import { stat } from 'node:fs/promises';
import type { ForkPlanOptions } from '../host/forkPlan.js';
import { beginsWait, pendingWait, waitOfEvent, type RunWait } from '../events/pendingWait.js';
import { requireJetStream } from '../nats/jetStreamNotEnabled.js';
import { openTraceToRead } from '../nats/cluster/openTraceToRead.js';
import { forkOnCluster } from '../nats/cluster/clusterFork.js';
import { ExitCode, exitCodeOf } from './exitCodes.js';
import { connectFromOptions, subjectPrefix } from './natsOptions.js';
import { line, styles, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { stopWithin } from './stopWithin.js';
import { formatOutcome } from './timeline.js';
import { reportWaiting } from './waitingReport.js';

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
  const stopping = new AbortController();
  const stopFollowing = () => stopping.abort();
  try {
    await requireJetStream(nc);
    let parked: (wait: RunWait) => void = () => undefined;
    const waiting = new Promise<RunWait>((resolve) => (parked = resolve));
    process.once('SIGINT', stopFollowing);
    // A file is a log to fork from; anything else a trace id in the stream.
    const isLog = await stat(from).then((found) => found.isFile(), () => false);
    const fork = await forkOnCluster({
      ...plan,
      nc,
      prefix,
      from: isLog ? { log: from } : from,
      signal: stopping.signal,
      onEvent: (event) => {
        if (!json) progress.onEvent(event);
        const wait = beginsWait(event) ? waitOfEvent(event, { input: {} }) : undefined;
        if (wait) parked(wait);
      },
    });
    // Stored and handed over: a core worker's next takeover scan starts it (with none running, forkOnCluster refused it).
    if (!json) line(output.err, s.dim(`fork ${fork.traceId} of ${fork.parent.log ?? fork.parent.traceId} at iteration ${plan.at}, handed to the core workers of ${prefix}`));
    const detached = new Promise<'detached'>((resolve) => {
      if (stopping.signal.aborted) resolve('detached');
      else stopping.signal.addEventListener('abort', () => resolve('detached'), { once: true });
    });
    const ended = await Promise.race([fork.result, detached, waiting]);
    progress.done();
    if (ended === 'detached') {
      line(output.err, s.yellow(`stopped following fork ${fork.traceId}; it goes on on the cluster (redflow tail ${fork.traceId})`));
      return ExitCode.Interrupted;
    }
    if ('kind' in ended) {
      fork.detach();
      const stored = pendingWait((await openTraceToRead(nc, prefix).then((store) => store.read(fork.traceId))).events) ?? ended;
      return reportWaiting({ traceId: fork.traceId, wait: stored }, { cluster: true }, json, output);
    }
    if (json) {
      line(output.out, JSON.stringify({ traceId: fork.traceId, parent: fork.parent, outcome: ended.outcome, envelope: ended.envelope }, null, 2));
    } else {
      if (ended.outcome.reason === 'final_answer') line(output.out, ended.outcome.answer ?? '');
      else line(output.err, formatOutcome(ended.outcome, output.color));
      if (ended.outcome.status === 'done_partial' && ended.outcome.answer !== undefined) line(output.out, ended.outcome.answer);
      line(output.err, s.dim(`fork ${fork.traceId} on ${prefix} (redflow replay ${fork.traceId} --nats <url> --tree shows it under its parent)`));
    }
    return exitCodeOf(ended.outcome);
  } finally {
    process.off('SIGINT', stopFollowing);
    await stopWithin([], nc);
  }
}
