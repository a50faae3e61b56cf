import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ReadResult } from '../events/eventStore.js';
import { loadFlowFile } from '../flows/loadFlow.js';
import { FlowInvalidError } from '../runtime/embeddedFlowRun.js';
import { openJetStreamEventStore } from '../events/jetstream/jetstreamEventStore.js';
import { startRemoteRun } from '../distributed/remoteRun.js';
import { ExitCode, exitCodeOf } from './exitCodes.js';
import { connectFromOptions, subjectPrefix } from './natsOptions.js';
import { line, styles, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { formatOutcome } from './timeline.js';

/** What `redflow run --nats` needs. */
export interface ClusterRunOptions {
  readonly flowPath: string;
  readonly input: unknown;
  readonly traceId?: string;
  readonly values: Record<string, string | boolean | undefined>;
  readonly json: boolean;
  readonly output: Output;
  readonly progress: ReturnType<typeof createProgressPrinter>;
}

/**
 * `redflow run <flow> --nats <url>`: checks the flow here, asks the cluster's core workers to run
 * it, follows its events live, and prints the outcome. Ctrl-C stops following; the run goes on.
 */
export async function runOnCluster(options: ClusterRunOptions): Promise<ExitCode> {
  const { output, values } = options;
  const loaded = await loadFlowFile(options.flowPath);
  if (!loaded.validation.ok) throw new FlowInvalidError(loaded.path, loaded.validation.errors, loaded.validation.warnings);
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-run');
  const s = styles(output.color);
  try {
    const flowId = loaded.validation.flow.definition.id;
    const remote = await startRemoteRun({
      nc,
      prefix,
      input: options.input,
      ...(options.traceId !== undefined && { traceId: options.traceId }),
      ...(flowId !== undefined && { flowId }),
      ...(typeof values.conversation === 'string' && { conversationId: values.conversation }),
      onEvent: (event) => {
        if (!options.json) options.progress.onEvent(event);
      },
    });
    const detached = new Promise<'detached'>((resolve) => {
      process.once('SIGINT', () => {
        remote.detach();
        resolve('detached');
      });
    });
    const ended = await Promise.race([remote.result, detached]);
    options.progress.done();
    if (ended === 'detached') {
      line(output.err, s.yellow(`stopped following run ${remote.traceId}; it goes on on the cluster (redflow tail ${remote.traceId})`));
      return ExitCode.Interrupted;
    }
    if (options.json) {
      line(output.out, JSON.stringify({ traceId: remote.traceId, outcome: ended.outcome, envelope: ended.envelope }, null, 2));
    } else {
      if (ended.outcome.reason === 'final_answer') line(output.out, ended.outcome.answer ?? '');
      else line(output.err, formatOutcome(ended.outcome, output.color));
      line(output.err, s.dim(`run ${remote.traceId} on ${prefix} (redflow replay ${remote.traceId} --nats <url> shows it again)`));
    }
    return exitCodeOf(ended.outcome);
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

/** `redflow replay <traceId> --nats <url>`: the run's events as stored in JetStream. */
export async function readClusterLog(values: Record<string, string | boolean | undefined>, traceId: string): Promise<ReadResult> {
  if (traceId.endsWith('.jsonl') || traceId.includes(path.sep)) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `with --nats, give the run's trace id, not a file (${traceId})`));
  }
  const nc = await connectFromOptions(values, 'redflow-replay');
  try {
    const store = await openJetStreamEventStore(nc, { prefix: subjectPrefix(values) });
    return await store.read(traceId);
  } finally {
    await nc.drain().catch(() => undefined);
  }
}
