import type { NatsConnection } from '@nats-io/transport-node';
import type { ParentCall, RunOutcome } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { Subject, checkSubjectPrefix } from '../actors/subjects.js';
import { createNatsTransport } from '../actors/nats/natsTransport.js';
import type { ToolContext, ToolDefinition } from '../actors/tool.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { logStatus } from '../events/resumePoint.js';
import { loadFlowFile } from '../flows/loadFlow.js';
import { childTraceIdOf } from '../machines/subagents.js';
import { isValidTraceId } from '../runtime/ids.js';
import { SUBAGENT_INPUT_SCHEMA, subagentOutput, type SubagentDefinition, type SubagentHost } from '../runtime/subagentTool.js';
import type { RunStartReply, RunStartRequest } from './coreWorker.js';
import { openTraceToRead } from './openTraceToRead.js';
import { requestRunAbort } from './runAborts.js';
import { runLogExists } from './runLogExists.js';
import { TRACEPARENT_HEADER } from '../telemetry/traceContext.js';
import { parseTraceEvents } from './traceEvent.js';

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
  /** How often the stored log is read while a run is followed, besides its live events (default 2 s). */
  readonly pollMs?: number;
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

/** Starts the call's run on the subagent's prefix (or finds it there) and waits for its ending. */
async function runOnCluster(
  options: ClusterSubagentOptions,
  subagent: SubagentDefinition,
  prefix: string,
  child: ChildStart,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { nc } = options;
  const { traceId } = child;
  let settle: ((outcome: RunOutcome) => void) | undefined;
  const ended = new Promise<RunOutcome>((resolve) => (settle = resolve));
  // Listening before anything starts, so its ending cannot pass unseen.
  const live = nc.subscribe(Subject.runTrace(prefix, traceId), {
    callback: (error, message) => {
      if (error) return;
      for (const event of parseTraceEvents(message.data) ?? []) {
        if (event.traceId === traceId && isTerminal(event)) settle?.(outcomeOf(event));
      }
    },
  });
  let poll: NodeJS.Timeout | undefined;
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () => {
      void requestRunAbort(nc, prefix, traceId, { reason: 'the calling run ended' }).catch(() => undefined);
      reject(new RedflowError(errorInfo(ErrorCode.RUN_ABORTED, `subagent "${subagent.name}": the call was cancelled, and its run ${traceId} aborted`)));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  const logs = storedLogs(nc, prefix);
  try {
    await nc.flush();
    const logged = await loggedEnding(logs, child);
    if (logged !== undefined) return logged;
    if (!(await runLogExists(nc, prefix, traceId))) await startChild(options, subagent, prefix, child);
    // The stored log is read now and then too: a live event lost in a reconnect must not hang the call.
    const polled = new Promise<RunOutcome>((resolve, reject) => {
      poll = setInterval(() => {
        loggedEnding(logs, child).then((outcome) => outcome !== undefined && resolve(outcome), reject);
      }, options.pollMs ?? 2000);
    });
    polled.catch(() => undefined);
    return await Promise.race([ended, polled, aborted]);
  } finally {
    if (poll !== undefined) clearInterval(poll);
    live.unsubscribe();
    await logs.close();
  }
}

/** A run's stored log on `prefix`, read when it has one: the trace stream opened at the first read, closed once. */
interface StoredLogs {
  read(traceId: string): Promise<readonly AgentEvent[]>;
  close(): Promise<void>;
}

function storedLogs(nc: NatsConnection, prefix: string): StoredLogs {
  let store: ReturnType<typeof openTraceToRead> | undefined;
  return {
    async read(traceId) {
      if (!(await runLogExists(nc, prefix, traceId))) return [];
      store ??= openTraceToRead(nc, prefix);
      return (await (await store).read(traceId)).events;
    },
    async close() {
      await (await store?.catch(() => undefined))?.close();
    },
  };
}

/**
 * The outcome of the call's run when its stored log has ended; undefined when it has no log yet
 * or is under way.
 *
 * @throws RedflowError `SUBAGENT_TRACE_TAKEN` when the log there is not this call's run.
 */
async function loggedEnding(logs: StoredLogs, child: ChildStart): Promise<RunOutcome | undefined> {
  const events = await logs.read(child.traceId);
  if (events.length === 0) return undefined;
  const status = logStatus(events);
  const logged = status.started.parent;
  if (logged?.traceId !== child.parent.traceId || logged.idempotencyKey !== child.parent.idempotencyKey) {
    throw new RedflowError(
      errorInfo(ErrorCode.SUBAGENT_TRACE_TAKEN, `run ${child.traceId} was not started by the call ${child.parent.idempotencyKey}`, {
        hint: 'start the calling run with another trace id',
      }),
    );
  }
  return status.kind === 'finished' ? status.outcome : undefined;
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
