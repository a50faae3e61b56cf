import type { NatsConnection } from '@nats-io/nats-core';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { StepLogs } from '../../stepService/stepLogs.js';
import { openJetStreamEventStore } from '../jetstream/jetstreamEventStore.js';

/**
 * Session logs in the cluster's trace stream (`<prefix>.log.<traceId>.*`): `redflow replay --nats`
 * reads them, and `nats sub '<prefix>.trace.>'` shows each event live, one per message.
 *
 * @example
 * ```ts
 * const logs = jetStreamStepLogs(nc, 'redflow');
 * ```
 */
export function jetStreamStepLogs(nc: NatsConnection, prefix: string): StepLogs {
  const open = () => openJetStreamEventStore(nc, { prefix });
  return {
    async exists(traceId) {
      const store = await open();
      try {
        return (await store.read(traceId)).events.length > 0;
      } catch (error) {
        // A run with no events in the stream is reported as an error by the store: here it is an answer.
        if (error instanceof RedflowError && error.code === ErrorCode.LOG_NOT_FOUND) return false;
        throw error;
      } finally {
        await store.close();
      }
    },
    open: () => open(),
  };
}
