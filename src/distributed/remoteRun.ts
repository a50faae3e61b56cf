import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentEnvelope, ParentCall, RunOutcome } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { DEFAULT_SUBJECT_PREFIX, Subject } from '../actors/subjects.js';
import { createNatsTransport } from '../actors/nats/natsTransport.js';
import { openJetStreamEventStore } from '../events/jetstream/jetstreamEventStore.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { fold } from '../events/evolve.js';
import { logStatus } from '../events/resumePoint.js';
import { randomIds } from '../runtime/ids.js';
import type { RunStartReply, RunStartRequest } from './coreWorker.js';
import { parseTraceEvents } from './traceEvent.js';

/** Options of {@link startRemoteRun}. */
export interface RemoteRunOptions {
  readonly nc: NatsConnection;
  readonly input: unknown;
  readonly prefix?: string;
  readonly traceId?: string;
  readonly conversationId?: string;
  /** The flow the client means; the core workers refuse a run of another flow. */
  readonly flowId?: string;
  /** The run's timeout in ms (default: the core worker's). */
  readonly timeoutMs?: number;
  /** Called with each event of the run as it is stored, in order. */
  readonly onEvent?: (event: AgentEvent) => void;
  /** How long to wait for a core worker to take the run (default 10 s). */
  readonly startTimeoutMs?: number;
  /** The call of another run that starts this one as its subagent (recorded in `run.started`). */
  readonly parent?: ParentCall;
}

/** A run started on the cluster. */
export interface RemoteRun {
  readonly traceId: string;
  /** Resolves with the outcome and the envelope (the fold of the run's stored log) once it ends. */
  readonly result: Promise<{ readonly outcome: RunOutcome; readonly envelope: AgentEnvelope }>;
  /** Stops listening; the run goes on on the cluster. */
  detach(): void;
}

/**
 * Asks the cluster's core workers to start a run and follows it live on its trace subjects. The
 * run does not depend on this client: if the client goes away, the run goes on.
 *
 * @example
 * ```ts
 * const run = await startRemoteRun({ nc, input: 'Where is order A-1001?', onEvent: print });
 * const { outcome } = await run.result;
 * ```
 */
export async function startRemoteRun(options: RemoteRunOptions): Promise<RemoteRun> {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  const traceId = options.traceId ?? randomIds.traceId();
  let settle: { resolve: (value: { outcome: RunOutcome; envelope: AgentEnvelope }) => void; reject: (error: unknown) => void } | undefined;
  const result = new Promise<{ outcome: RunOutcome; envelope: AgentEnvelope }>((resolve, reject) => (settle = { resolve, reject }));
  result.catch(() => undefined);

  const live: AgentEvent[] = [];
  // Listen before the run starts, so no event is missed.
  const subscription = options.nc.subscribe(Subject.runTrace(prefix, traceId), {
    callback: (error, message) => {
      if (error) return;
      for (const event of parseTraceEvents(message.data) ?? []) {
        live.push(event);
        options.onEvent?.(event);
        if (isTerminal(event)) void finish();
      }
    },
  });
  await options.nc.flush();

  const finish = async () => {
    subscription.unsubscribe();
    try {
      // The stored log is the truth: when the live events are not exactly seq 1..n (a message
      // missed, or delivered twice), fold the stored ones instead.
      const complete = live.every((event, i) => event.seq === i + 1);
      const events = complete ? live : (await (await openJetStreamEventStore(options.nc, { prefix })).read(traceId)).events;
      const status = logStatus(events);
      if (status.kind !== 'finished') throw new RedflowError(errorInfo(ErrorCode.RUN_STOPPED, `run ${traceId} has not ended`));
      settle?.resolve({ outcome: status.outcome, envelope: fold(events) });
    } catch (error) {
      settle?.reject(error);
    }
  };

  const transport = createNatsTransport(options.nc);
  const request: RunStartRequest = {
    input: options.input,
    traceId,
    ...(options.conversationId !== undefined && { conversationId: options.conversationId }),
    ...(options.flowId !== undefined && { flowId: options.flowId }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.parent !== undefined && { parent: options.parent }),
  };
  const reply = await transport.request<RunStartRequest, RunStartReply>(Subject.runStart(prefix), request, {
    timeoutMs: options.startTimeoutMs ?? 10_000,
  });
  await transport.close();
  if (!reply.ok) {
    subscription.unsubscribe();
    const hint =
      reply.error.code === ErrorCode.TRANSPORT_NO_RESPONDER
        ? `no core worker is running for prefix "${prefix}": start one with \`redflow worker <flow> --role core --nats <url>${prefix === DEFAULT_SUBJECT_PREFIX ? '' : ` --prefix ${prefix}`}\`, or check --nats and --prefix`
        : reply.error.hint;
    throw new RedflowError({ ...reply.error, ...(hint !== undefined && { hint }) });
  }
  return {
    traceId,
    result,
    detach: () => subscription.unsubscribe(),
  };
}
