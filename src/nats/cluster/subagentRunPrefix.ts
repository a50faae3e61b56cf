import type { NatsConnection } from '@nats-io/transport-node';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import type { JetStreamEventStore } from '../jetstream/jetstreamEventStore.js';
import { MAX_SUBAGENT_DEPTH, childTraceIdOf } from '../../machines/subagents.js';
import { subagentPrefix } from './clusterSubagents.js';
import { openTraceToRead } from './openTraceToRead.js';
import { runLogExists } from './runLogExists.js';

/** How {@link findRunPrefix} looks at the cluster's logs (one prefix's trace stream at a time). */
export interface RunLogLookup {
  /** True when `prefix`'s trace stream holds run `traceId`'s log. */
  readonly exists: (prefix: string, traceId: string) => Promise<boolean>;
  /** Run `traceId`'s events in `prefix`'s trace stream. */
  readonly read: (prefix: string, traceId: string) => Promise<readonly AgentEvent[]>;
}

/** A subagent run's trace id (`<parent>-<iteration>`): the caller's trace id and the call's iteration. */
const CHILD_TRACE_ID = /^(.+)-([1-9]\d{0,5})$/;

/**
 * The prefix whose trace stream holds run `traceId`: `prefix` itself, or, for a subagent's run on a
 * cluster, the subagent's prefix below its caller's (`redflow.agent-researcher`). A subagent run's
 * trace id names its caller and the call (`<parent>-<iteration>`), so the caller's log, found the
 * same way, says which subagent that call went to; the walk goes up at most as deep as subagents
 * nest. Undefined when no log of that run is found.
 *
 * @example
 * ```ts
 * await findRunPrefix('desk-1', 'redflow', lookup) // 'redflow.agent-researcher'
 * ```
 */
export async function findRunPrefix(traceId: string, prefix: string, lookup: RunLogLookup, depth = 0): Promise<string | undefined> {
  if (await lookup.exists(prefix, traceId)) return prefix;
  const child = CHILD_TRACE_ID.exec(traceId);
  if (child === null || depth >= MAX_SUBAGENT_DEPTH) return undefined;
  const [, parentTraceId = '', iteration = ''] = child;
  const parentPrefix = await findRunPrefix(parentTraceId, prefix, lookup, depth + 1);
  if (parentPrefix === undefined) return undefined;
  const call = (await lookup.read(parentPrefix, parentTraceId)).find(
    (event) => event.type === AgentEventType.ToolRequested && event.iteration === Number(iteration) && event.data.childTraceId === traceId,
  );
  if (call?.type !== AgentEventType.ToolRequested || childTraceIdOf(parentTraceId, call.iteration) !== traceId) return undefined;
  const found = subagentPrefix(parentPrefix, call.data.tool);
  return (await lookup.exists(found, traceId)) ? found : undefined;
}

/** A {@link RunLogLookup} on a cluster's trace streams, with the stores it opened (one per prefix). */
export interface ClusterRunLogs extends RunLogLookup {
  /** The trace stream of `prefix`, opened once, for reading. */
  readonly storeOf: (prefix: string) => Promise<JetStreamEventStore>;
  /** Closes the stores it opened (not the connection). */
  readonly close: () => Promise<void>;
}

/**
 * Reads the logs of a cluster whose runs may be spread over subagent prefixes: each prefix's
 * trace stream is opened for reading on first use (see `openTraceToRead`) and kept.
 *
 * @example
 * ```ts
 * const logs = clusterRunLogs(nc);
 * const prefix = await findRunPrefix(traceId, 'redflow', logs);
 * const { events } = await (await logs.storeOf(prefix ?? 'redflow')).read(traceId);
 * ```
 */
export function clusterRunLogs(nc: NatsConnection): ClusterRunLogs {
  const stores = new Map<string, Promise<JetStreamEventStore>>();
  const storeOf = (prefix: string): Promise<JetStreamEventStore> => {
    let store = stores.get(prefix);
    if (store === undefined) {
      store = openTraceToRead(nc, prefix);
      // A failed opening is not kept: the stream may exist on the next try.
      store.catch(() => stores.delete(prefix));
      stores.set(prefix, store);
    }
    return store;
  };
  return {
    storeOf,
    exists: (prefix, traceId) => runLogExists(nc, prefix, traceId),
    read: async (prefix, traceId) => (await (await storeOf(prefix)).read(traceId)).events,
    async close() {
      for (const store of stores.values()) await (await store.catch(() => undefined))?.close();
      stores.clear();
    },
  };
}
