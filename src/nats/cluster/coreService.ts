import { hostname } from 'node:os';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { RunWait } from '../../events/pendingWait.js';
import { startMicroService, type MicroService } from '../microService.js';
import { redflowVersion as version } from '../../version.js';
import type { RunRecord } from './runLeases.js';

// The core worker's parts that touch no run: its micro service, and what a run's record keeps of a wait.

/**
 * The core worker's micro service, or undefined (said in `log`) when the connection may not
 * subscribe to the service framework's `$SRV.>` subjects.
 *
 * @example
 * ```ts
 * const micro = await startCoreService(nc, 'redflow', 'order-status', console.log);
 * ```
 */
export async function startCoreService(nc: NatsConnection, prefix: string, flow: string, log: (line: string) => void): Promise<MicroService | undefined> {
  try {
    return await startMicroService(nc, {
      name: 'redflow-core',
      version,
      description: `Redflow core workers of flow ${flow} on ${prefix}`,
      prefix,
      metadata: { 'redflow.prefix': prefix, 'redflow.flow': flow, host: hostname(), pid: String(process.pid) },
      log,
    });
  } catch (error) {
    if (!(error instanceof RedflowError && error.code === ErrorCode.TRANSPORT_PERMISSION_DENIED)) throw error;
    log(`${error.message}: serving run starts without it (${error.hint ?? ''})`);
    return undefined;
  }
}

/**
 * What the run's record keeps of its wait while it is parked.
 *
 * @example
 * ```ts
 * await leases.park(traceId, parkedAs(wait));
 * ```
 */
export function parkedAs(wait: RunWait): NonNullable<RunRecord['waiting']> {
  return { kind: wait.kind, idempotencyKey: wait.idempotencyKey, deadline: wait.deadline };
}
