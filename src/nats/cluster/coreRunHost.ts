import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { EventStore } from '../../events/eventStore.js';
import type { AgentEvent } from '../../events/eventTypes.js';
import { pendingWait } from '../../events/pendingWait.js';
import { logStatus } from '../../events/resumePoint.js';
import { RunHost } from '../../host/runHost.js';
import { isValidTraceId } from '../../runtime/ids.js';
import { parkedAs } from './coreService.js';
import type { RunLeases } from './runLeases.js';

/**
 * A core worker's run host: the runs it owns, and the answers to parked runs (or the expiry of
 * their waits) it takes. Each answer is checked against the log, the run's record claimed (one
 * claim wins), the log checked again now that no one else may change it, and the run resumed with
 * it through `resume`.
 *
 * @example
 * ```ts
 * const host = createCoreRunHost({ store, leases, log, resume: ({ traceId, events, answer }) => resumeOwned(traceId, events, {}, answer) });
 * ```
 */
export function createCoreRunHost(deps: {
  readonly store: EventStore;
  readonly leases: RunLeases;
  readonly log: (line: string) => void;
  readonly resume: ConstructorParameters<typeof RunHost>[0]['resume'];
}): RunHost {
  const { store, leases, log, resume } = deps;
  /** The good part of a run's log, or RUN_NOT_FOUND. */
  const readEvents = async (traceId: string): Promise<readonly AgentEvent[]> => {
    try {
      const { events } = await store.read(traceId);
      if (events.length > 0) return events;
    } catch (error) {
      if (!(error instanceof RedflowError && error.code === ErrorCode.LOG_NOT_FOUND)) throw error;
    }
    throw new RedflowError(errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${traceId} in the trace stream`, { hint: 'check the trace id and the subject prefix' }));
  };

  return new RunHost({
    read: async (traceId) => {
      if (!isValidTraceId(traceId)) throw new RedflowError(errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${String(traceId).slice(0, 130)}`));
      return readEvents(traceId);
    },
    ownership: {
      async take(traceId, taken, events) {
        const started = logStatus(events).started;
        const claim = await leases.claimForAnswer(traceId, taken, {
          traceId,
          startedAt: started.startedAt,
          ...(started.conversationId !== undefined && { conversationId: started.conversationId }),
        });
        if (claim.kind === 'owned') {
          throw new RedflowError(
            errorInfo(ErrorCode.WAIT_ALREADY_ANSWERED, `run ${traceId} is held by core worker ${claim.owner}: an answer to its wait is being taken, or it is under way; a wait takes one answer`, {
              hint: `GET /api/runs/${traceId} shows what the run waits for once it is parked again`,
            }),
          );
        }
        return { events: await readEvents(traceId), ...(claim.record.timeoutMs !== undefined && { timeoutMs: claim.record.timeoutMs }) };
      },
      async release(traceId, now) {
        const wait = pendingWait(now);
        if (wait) await leases.park(traceId, parkedAs(wait));
        else await leases.finish(traceId);
      },
    },
    resume: async (resumption) => {
      const { traceId, answer: taken } = resumption;
      await resume(resumption);
      log(`run ${traceId} resumed with ${taken.kind === 'approval' ? (taken.approved ? 'an approval' : 'a denial') : taken.kind === 'client' ? "its client's result" : 'its wait expired'}`);
    },
    closedError: () => new RedflowError(errorInfo(ErrorCode.TRANSPORT_CLOSED, 'this core worker is shutting down', { retryable: true })),
    onExpireError: (traceId, error) => log(`run ${traceId}: cannot end its expired wait: ${(error as Error).message}`),
  });
}
