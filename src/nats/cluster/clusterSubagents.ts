import type { NatsConnection } from '@nats-io/transport-node';
import type { ParentCall, RunOutcome } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { Storage, Subject, checkSubjectPrefix } from '../../actors/subjects.js';
import { createNatsTransport } from '../natsTransport.js';
import type { ToolContext, ToolDefinition } from '../../actors/tool.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../../events/eventTypes.js';
import { followJetStreamRun } from '../jetstream/followRun.js';
import { loadFlowFile } from '../../flows/loadFlow.js';
import { childTraceIdOf } from '../../machines/subagents.js';
import { isValidTraceId } from '../../runtime/ids.js';
import { SUBAGENT_INPUT_SCHEMA, subagentOutput, type SubagentDefinition, type SubagentHost } from '../../runtime/subagentTool.js';
import type { RunStartReply, RunStartRequest } from './coreWorker.js';
import { requestRunAbort } from './runAborts.js';
import { runLogExists } from './runLogExists.js';
import { TRACEPARENT_HEADER } from '../../telemetry/traceContext.js';

/**
 * The subject prefix of a subagent's runs on a cluster: the calling flow's prefix and a token
 * made of the subagent's name (`redflow` and `research_team` give `redflow.agent-research-team`).
 * A prefix's core workers run one flow, so each subagent's flow has a prefix of its own, with its
 * own stream and buckets, below its caller's.
 *
 * @throws RedflowError `SUBJECT_PREFIX_INVALID` when the prefix it makes is not one.
 * @example
 * ```ts
 * subagentPrefix('redflow', 'research') // 'redflow.agent-research'
 * ```
 */
export function subagentPrefix(prefix: string, name: string): string {
  const derived = `${prefix}.agent-${name.toLowerCase().replace(/_/g, '-')}`;
  checkSubjectPrefix(derived);
  return derived;
}

/** Options of {@link clusterSubagents}. */
export interface ClusterSubagentOptions {
  readonly nc: NatsConnection;
  /** The calling flow's subject prefix: each subagent's runs go to {@link subagentPrefix} of it. */
  readonly prefix: string;
  /** How long a core worker of the subagent has to take a start (default 10 s). */
  readonly startTimeoutMs?: number;
}

/**
 * Runs subagents on a cluster: a call of a subagent starts a run of its flow on the core workers
 * of its prefix ({@link subagentPrefix}: `redflow worker` hosts them with the caller's flow), with
 * the task as input, the trace id `<traceId>-<iteration>` of the call, the link to the call
 * (`parent`) and the subagent's timeout, then follows the run until its ending, whose outcome is
 * the call's answer. A call sent again (its tool worker died, or the caller's core worker did)
 * finds the run under way or ended, by its trace id, and follows it instead of starting another:
 * one run per call. When the call is cancelled (the calling run was aborted or timed out), the
 * subagent's run is aborted. The subagent's core workers never park its run: a wait in it ends at
 * once (see `startCoreWorker`).
 *
 * @example
 * ```ts
 * const { tools } = await buildTools(plan, { subagents: clusterSubagents({ nc, prefix: 'redflow' }) });
 * ```
 */
export function clusterSubagents(options: ClusterSubagentOptions): SubagentHost {
  return (subagent) => {
    const prefix = subagentPrefix(options.prefix, subagent.name);
    // The subagent's flow id, so workers of another flow under that prefix refuse the run (FLOW_MISMATCH).
    let flowId: Promise<string | undefined> | undefined;
    return {
      name: subagent.name,
      description: subagent.description,
      inputSchema: { ...SUBAGENT_INPUT_SCHEMA },
      async execute(input: Record<string, unknown>, context: ToolContext) {
        const traceId = childTraceIdOf(context.traceId, context.iteration);
        if (!isValidTraceId(traceId)) {
          throw new RedflowError(errorInfo(ErrorCode.SUBAGENT_TRACE_TAKEN, `subagent "${subagent.name}": the trace id of its run would pass 128 characters`));
        }
        flowId ??= loadFlowFile(subagent.flowPath).then((loaded) => (loaded.validation.ok ? loaded.validation.flow.definition.id : undefined));
        const parent: ParentCall = { traceId: context.traceId, iteration: context.iteration, idempotencyKey: context.idempotencyKey, tool: subagent.name };
        const outcome = await runOnCluster(
          options,
          subagent,
          prefix,
          { traceId, parent, task: String(input.task), flowId: await flowId, traceparent: context.traceparent },
          context.signal,
        );
        return subagentOutput(subagent.name, traceId, outcome);
      },
    } satisfies ToolDefinition;
  };
}

/** The subagent run a call names. */
interface ChildStart {
  readonly traceId: string;
  readonly parent: ParentCall;
  readonly task: string;
  readonly flowId: string | undefined;
  /** The call's trace context, sent as the start's `traceparent` header: the core logs it in `parent`. */
  readonly traceparent: string | undefined;
}

/**
 * Starts the call's run on the subagent's prefix (or finds it there) and follows it in that
 * prefix's trace stream to its ending (the JetStream store's follow: an ordered consumer, so a
 * reconnection loses nothing). The run's first event says whose call it is.
 *
 * @throws RedflowError `SUBAGENT_TRACE_TAKEN` when the run under that trace id is not this call's;
 *   `RUN_ABORTED` when the call is cancelled (its run is aborted too).
 */
async function runOnCluster(
  options: ClusterSubagentOptions,
  subagent: SubagentDefinition,
  prefix: string,
  child: ChildStart,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { nc } = options;
  const { traceId } = child;
  // The stream exists once a core worker of the prefix has run: the start asks one first.
  if (!signal.aborted && !(await runLogExists(nc, prefix, traceId))) await startChild(options, subagent, prefix, child);
  for await (const event of followJetStreamRun(nc, Storage.traceStream(prefix), prefix, traceId, 0, { signal })) {
    if (event.type === AgentEventType.RunStarted) checkCallOf(event, child);
    if (isTerminal(event)) return outcomeOf(event);
  }
  // Ended without the run's ending: the call was cancelled (the calling run was aborted or timed out).
  void requestRunAbort(nc, prefix, traceId, { reason: 'the calling run ended' }).catch(() => undefined);
  throw new RedflowError(errorInfo(ErrorCode.RUN_ABORTED, `subagent "${subagent.name}": the call was cancelled, and its run ${traceId} aborted`));
}

/**
 * Refuses a run under the call's trace id that another call started.
 *
 * @throws RedflowError `SUBAGENT_TRACE_TAKEN`.
 */
function checkCallOf(started: Extract<AgentEvent, { type: 'run.started' }>, child: ChildStart): void {
  const logged = started.data.parent;
  if (logged?.traceId === child.parent.traceId && logged.idempotencyKey === child.parent.idempotencyKey) return;
  throw new RedflowError(
    errorInfo(ErrorCode.SUBAGENT_TRACE_TAKEN, `run ${child.traceId} was not started by the call ${child.parent.idempotencyKey}`, {
      hint: 'start the calling run with another trace id',
    }),
  );
}

/**
 * Asks the subagent's core workers to start the call's run. A start refused because the trace id
 * is taken means another attempt of this call started it: it is followed like one found.
 */
async function startChild(options: ClusterSubagentOptions, subagent: SubagentDefinition, prefix: string, child: ChildStart): Promise<void> {
  const transport = createNatsTransport(options.nc, { log: () => undefined });
  try {
    const request: RunStartRequest = {
      input: child.task,
      traceId: child.traceId,
      parent: child.parent,
      timeoutMs: subagent.timeoutMs,
      ...(child.flowId !== undefined && { flowId: child.flowId }),
    };
    // The call's trace context goes as a header, not in `parent`: a core worker that does not know
    // it still takes the start.
    const reply = await transport.request<RunStartRequest, RunStartReply>(Subject.runStart(prefix), request, {
      timeoutMs: options.startTimeoutMs ?? 10_000,
      ...(child.traceparent !== undefined && { headers: { [TRACEPARENT_HEADER]: child.traceparent } }),
    });
    if (reply.ok || reply.error.code === ErrorCode.RUN_TRACE_ID_TAKEN) return;
    if (reply.error.code === ErrorCode.TRANSPORT_NO_RESPONDER || reply.error.code === ErrorCode.TRANSPORT_TIMEOUT) {
      throw new RedflowError(
        errorInfo(reply.error.code, `no core worker runs subagent "${subagent.name}" on prefix ${prefix}`, {
          hint: `redflow worker <the calling flow> --role core hosts its subagents' core workers too; or start one: redflow worker ${subagent.flow} --role core --prefix ${prefix}`,
          retryable: true,
        }),
      );
    }
    throw new RedflowError(reply.error);
  } finally {
    await transport.close();
  }
}

function outcomeOf(event: AgentEvent): RunOutcome {
  return (event.data as { outcome: RunOutcome }).outcome;
}
