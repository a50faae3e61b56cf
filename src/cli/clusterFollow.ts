import type { AgentEnvelope, RunOutcome } from '../contracts/schema-types.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { beginsWait, pendingWait, waitOfEvent, type RunWait } from '../events/pendingWait.js';
import { openTraceToRead } from '../nats/cluster/openTraceToRead.js';
import { ExitCode, exitCodeOf } from './exitCodes.js';
import { line, styles, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { formatOutcome } from './timeline.js';
import { reportWaiting } from './waitingReport.js';

/** A run the cluster runs, as `startRemoteRun` and `forkOnCluster` return it. */
interface FollowedRun {
  readonly traceId: string;
  readonly result: Promise<{ readonly outcome: RunOutcome; readonly envelope: AgentEnvelope }>;
  detach(): void;
}

/** What {@link followOnCluster} returns. */
export interface ClusterFollow {
  /** Aborted by Ctrl-C: stops following (the run goes on). */
  readonly signal: AbortSignal;
  /** Shows the event's progress, and notes a wait the run parks on. */
  onEvent(event: AgentEvent): void;
  /** Waits for the run's end (or its wait, or Ctrl-C), prints it, and returns the exit code. */
  toEnd(run: FollowedRun, print: { readonly what: string; readonly footer: string; readonly json?: Record<string, unknown> }): Promise<ExitCode>;
  /** Lets Ctrl-C go back to ending the process. */
  close(): void;
}

/**
 * Following a run on the cluster from the CLI (`run --nats`, `fork --nats`): progress from its
 * events, Ctrl-C that stops following (the run goes on), a wait reported as the run parks, and its
 * outcome printed. `signal` aborts on Ctrl-C from the moment this is made; call `close` at the end.
 *
 * @example
 * ```ts
 * const follow = followOnCluster({ nc, prefix, json, output, progress });
 * const run = await startRemoteRun({ nc, prefix, input, signal: follow.signal, onEvent: follow.onEvent });
 * return await follow.toEnd(run, { what: 'run', footer: `redflow replay ${run.traceId} --nats <url> shows it again` });
 * ```
 */
export function followOnCluster(options: {
  /** The connection the run is followed on (the NATS wing names its type). */
  readonly nc: Parameters<typeof openTraceToRead>[0];
  readonly prefix: string;
  readonly json: boolean;
  readonly output: Output;
  readonly progress: ReturnType<typeof createProgressPrinter>;
}): ClusterFollow {
  const { nc, prefix, json, output, progress } = options;
  const s = styles(output.color);
  const stopping = new AbortController();
  const stopFollowing = () => stopping.abort();
  process.once('SIGINT', stopFollowing);
  let parked: (wait: RunWait) => void = () => undefined;
  const waiting = new Promise<RunWait>((resolve) => (parked = resolve));
  const detached = new Promise<'detached'>((resolve) => stopping.signal.addEventListener('abort', () => resolve('detached'), { once: true }));
  return {
    signal: stopping.signal,
    onEvent(event) {
      if (!json) progress.onEvent(event);
      // The run parks on the cluster: nothing more comes until someone answers it.
      const wait = beginsWait(event) ? waitOfEvent(event, { input: {} }) : undefined;
      if (wait) parked(wait);
    },
    async toEnd(run, print) {
      const ended = await Promise.race([run.result, detached, waiting]);
      progress.done();
      if (ended === 'detached') {
        line(output.err, s.yellow(`stopped following ${print.what} ${run.traceId}; it goes on on the cluster (redflow tail ${run.traceId})`));
        return ExitCode.Interrupted;
      }
      if ('kind' in ended) {
        run.detach();
        // The wait's event names the call; its input is in the stored log.
        const stored = pendingWait((await openTraceToRead(nc, prefix).then((store) => store.read(run.traceId))).events) ?? ended;
        return reportWaiting({ traceId: run.traceId, wait: stored }, { cluster: true }, json, output);
      }
      if (json) {
        line(output.out, JSON.stringify({ traceId: run.traceId, ...print.json, outcome: ended.outcome, envelope: ended.envelope }, null, 2));
      } else {
        if (ended.outcome.reason === 'final_answer') line(output.out, ended.outcome.answer ?? '');
        else line(output.err, formatOutcome(ended.outcome, output.color));
        if (ended.outcome.status === 'done_partial' && ended.outcome.answer !== undefined) line(output.out, ended.outcome.answer);
        line(output.err, s.dim(`${print.what} ${run.traceId} on ${prefix} (${print.footer})`));
      }
      return exitCodeOf(ended.outcome);
    },
    close() {
      process.off('SIGINT', stopFollowing);
    },
  };
}
