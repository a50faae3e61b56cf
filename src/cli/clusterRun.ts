import path from 'node:path';
import { isValidTraceId } from '../runtime/ids.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ReadResult } from '../events/eventStore.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import { openJetStreamEventStore } from '../nats/jetstream/jetstreamEventStore.js';
import { startRemoteRun } from '../nats/cluster/remoteRun.js';
import { followRunChunks } from '../nats/cluster/runChunks.js';
import { followOnCluster, type ClusterFollow } from './clusterFollow.js';
import { randomIds } from '../runtime/ids.js';
import { clusterRunLogs, findRunPrefix } from '../nats/cluster/subagentRunPrefix.js';
import type { AgentEnvelope, RunOutcome } from '../contracts/schema-types.js';
import { Subject } from '../actors/subjects.js';
import { createNatsTransport } from '../nats/natsTransport.js';
import { requireJetStream } from '../nats/jetStreamNotEnabled.js';
import { logStatus } from '../events/resumePoint.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import { reportWaiting } from './waitingReport.js';
import { resumeRun } from '../runtime/runAgent.js';
import { answerStillDue } from '../host/takeAnswer.js';
import { type ExitCode, exitCodeOf } from './exitCodes.js';
import { connectFromOptions, subjectPrefix } from './natsOptions.js';
import { line, type Output } from './output.js';
import type { createProgressPrinter } from './progress.js';
import { formatOutcome } from './timeline.js';
import { stopWithin } from './stopWithin.js';
import { allowedFolders } from './allowFilesOption.js';

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
  const { flow } = await loadValidFlow(options.flowPath, undefined, allowedFolders(values));
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-run');
  let follow: ClusterFollow | undefined;
  try {
    // Without JetStream no core worker can run, and "no core worker" would hide why.
    await requireJetStream(nc);
    const flowId = flow.definition.id;
    // Chosen here, so the answers' pieces are followed (on the status line) from the run's first model call.
    const traceId = options.traceId ?? randomIds.traceId();
    if (!options.json) followRunChunks(nc, prefix, traceId, (chunk) => options.progress.onChunk(chunk));
    // Ctrl-C from now on stops following, even while the start is under way: the run goes on.
    follow = followOnCluster({ nc, prefix, json: options.json, output, progress: options.progress });
    const remote = await startRemoteRun({
      nc,
      prefix,
      input: options.input,
      traceId,
      signal: follow.signal,
      ...(flowId !== undefined && { flowId }),
      ...(typeof values.conversation === 'string' && { conversationId: values.conversation }),
      onEvent: follow.onEvent,
    });
    return await follow.toEnd(remote, { what: 'run', footer: `redflow replay ${remote.traceId} --nats <url> shows it again` });
  } finally {
    follow?.close();
    await stopWithin([], nc);
  }
}

/** `redflow replay <traceId> --nats <url>`: the run's events as stored in JetStream. */
export async function readClusterLog(values: Record<string, string | boolean | undefined>, traceId: string): Promise<ReadResult> {
  if (traceId.endsWith('.jsonl') || traceId.includes(path.sep)) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `with --nats, give the run's trace id, not a file (${traceId})`));
  }
  const nc = await connectFromOptions(values, 'redflow-replay');
  const logs = clusterRunLogs(nc);
  try {
    // A subagent's run is in the stream of its own prefix, below its caller's.
    const prefix = subjectPrefix(values);
    const found = isValidTraceId(traceId) ? await findRunPrefix(traceId, prefix, logs) : undefined;
    return await (await logs.storeOf(found ?? prefix)).read(traceId);
  } finally {
    await logs.close();
    await stopWithin([], nc);
  }
}

/** What `redflow resume <traceId> --nats` needs. */
export interface ClusterResumeOptions {
  readonly traceId: string;
  readonly values: Record<string, string | boolean | undefined>;
  readonly json: boolean;
  readonly output: Output;
  readonly progress: ReturnType<typeof createProgressPrinter>;
}

/**
 * `redflow resume <traceId> --nats <url>`: continues a run whose core worker is gone, here, with
 * the cluster's model and tool workers. The agent and its tools are the ones the log recorded.
 */
export async function resumeOnCluster(options: ClusterResumeOptions): Promise<ExitCode> {
  const { output, values, traceId } = options;
  if (!isValidTraceId(traceId)) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `with --nats, give the run's trace id, not "${traceId}"`));
  }
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-resume');
  const owner = `resume-${process.pid}`;
  const { openRunLeases } = await import('../nats/cluster/runLeases.js');
  const leases = await openRunLeases(nc, { prefix, owner, leaseMs: 3000 });
  try {
    const store = await openJetStreamEventStore(nc, { prefix });
    const { events } = await store.read(traceId);
    const status = logStatus(events);
    let result: { outcome: RunOutcome; envelope: AgentEnvelope };
    const wait = status.kind === 'resumable' ? status.point.wait : undefined;
    if (wait && (await leases.orphan(traceId)) === undefined) {
      // Parked: its answer (or its deadline) resumes it on a core worker; there is nothing to do here.
      options.progress.done();
      return reportWaiting({ traceId, wait, envelope: status.kind === 'resumable' ? status.point.envelope : status.envelope }, { cluster: true }, options.json, output);
    }
    if (status.kind === 'finished') {
      result = { outcome: status.outcome, envelope: status.envelope };
    } else {
      const orphan = await leases.orphan(traceId);
      if (!orphan) {
        throw new RedflowError(
          errorInfo(ErrorCode.LOG_CONCURRENT_WRITER, `run ${traceId} has a live core worker`, {
            hint: `it will finish there: follow it with \`redflow tail ${traceId} --nats <url>\``,
          }),
        );
      }
      if (!(await leases.claim(orphan))) {
        throw new RedflowError(errorInfo(ErrorCode.LOG_CONCURRENT_WRITER, `another worker took run ${traceId} over first`));
      }
      // The flow names the model's and the memory's subjects; the log names everything else.
      const flowPath = (values.flow as string | undefined) ?? status.started.flow?.path;
      if (!flowPath) throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, 'the log does not say which flow it ran', { hint: 'give it with --flow <file>' }));
      const { flow } = await loadValidFlow(flowPath, undefined, allowedFolders(values));
      const conversationId = status.started.conversationId;
      const transport = createNatsTransport(nc);
      try {
        const answer = answerStillDue(events, orphan.answer);
        const handle = resumeRun({
          agent: status.started.agent,
          tools: status.started.tools,
          transport,
          subjects: { model: Subject.model(prefix, flow.model.id), tool: (name) => Subject.tool(prefix, name) },
          store,
          events,
          attemptTimeoutMs: 30_000,
          // A core worker that died after taking an answer left it in the run's record.
          ...(answer !== undefined && { answer }),
          onEvent: (event) => {
            if (!options.json) options.progress.onEvent(event);
          },
          ...(flow.memory &&
            conversationId !== undefined && {
              memory: {
                loadSubject: Subject.memoryLoad(prefix, flow.memory.id),
                appendSubject: Subject.memoryAppend(prefix, flow.memory.id),
                conversationId,
              },
            }),
        });
        let ended;
        try {
          ended = await handle.result;
        } catch (error) {
          if (!isRunWaiting(error)) throw error;
          // It waits again: parked on the cluster, where its answer resumes it.
          await leases.park(traceId, { kind: error.wait.kind, idempotencyKey: error.wait.idempotencyKey, deadline: error.wait.deadline });
          options.progress.done();
          return reportWaiting(error, { cluster: true }, options.json, output);
        }
        result = { outcome: ended.outcome, envelope: ended.envelope };
        await leases.finish(traceId);
      } finally {
        await transport.close();
      }
    }
    options.progress.done();
    if (options.json) line(output.out, JSON.stringify({ traceId, outcome: result.outcome, envelope: result.envelope }, null, 2));
    else if (result.outcome.reason === 'final_answer') line(output.out, result.outcome.answer ?? '');
    else {
      line(output.err, formatOutcome(result.outcome, output.color));
      if (result.outcome.status === 'done_partial' && result.outcome.answer !== undefined) line(output.out, result.outcome.answer);
    }
    return exitCodeOf(result.outcome);
  } finally {
    await leases.close();
    await stopWithin([], nc);
  }
}
