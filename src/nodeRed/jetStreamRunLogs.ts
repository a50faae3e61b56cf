import type { NatsConnection } from '../nats/index.js';
import { connectNats, type ConnectNatsOptions } from '../nats/connect.js';
import { requireJetStream } from '../nats/jetStreamNotEnabled.js';
import { DEFAULT_SUBJECT_PREFIX, checkSubjectPrefix } from '../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { openJetStreamEventStore } from '../nats/jetstream/jetstreamEventStore.js';
import { AgentEventType, isTerminal } from '../events/eventTypes.js';
import { runLogExists } from '../nats/cluster/runLogExists.js';
import { isValidTraceId } from '../runtime/ids.js';
import { listRunStarts } from '../nats/serve/natsRunList.js';
import { recentRun, type RecentRun } from './recentRuns.js';
import type { RunLog, RunLogs } from './runLogs.js';

/** `redflow.nats` in Node-RED's `settings.js`: the NATS server whose JetStream keeps the runs' logs. */
export interface NatsLogSettings extends Omit<ConnectNatsOptions, 'name'> {
  /** Subject prefix (default `redflow`): the stream is `<PREFIX>_TRACE`, as for a cluster's workers. */
  readonly prefix?: string;
}

/** How many of its newest runs an agent looks through for unfinished ones when it starts. */
export const RESUME_SCAN_LIMIT = 1000;

/**
 * An agent's run logs in the JetStream stream of `settings.prefix`, as a cluster's core workers
 * keep them: `redflow tail --nats` follows them live, `redflow replay <traceId> --nats` shows them.
 * The agent's runs are those whose `run.started` names it (`flow.id`); a second writer of one run
 * (another Node-RED continuing it too) gets `LOG_CONCURRENT_WRITER` and stops.
 *
 * @throws RedflowError `TRANSPORT_CONNECT_FAILED`, `JETSTREAM_NOT_ENABLED`, `SUBJECT_PREFIX_INVALID`.
 */
export async function openJetStreamRunLogs(settings: NatsLogSettings, agentId: string): Promise<RunLogs> {
  const prefix = settings.prefix ?? DEFAULT_SUBJECT_PREFIX;
  checkSubjectPrefix(prefix);
  const nc: NatsConnection = await connectNats({ ...settings, name: `redflow-node-red-${agentId}` });
  try {
    await requireJetStream(nc);
    const store = await openJetStreamEventStore(nc, { prefix });
    const servers = typeof settings.servers === 'string' ? settings.servers : settings.servers.join(',');
    const log: RunLog = { store, stream: store.stream, close: async () => {} };
    const mine = (started: { data: { flow?: { id?: string } } }): boolean => started.data.flow?.id === agentId;
    return {
      where: `JetStream stream ${store.stream} on ${servers}`,
      create: async () => log,
      async read(traceId) {
        if (!isValidTraceId(traceId) || !(await runLogExists(nc, prefix, traceId))) return undefined;
        const { events } = await store.read(traceId);
        const first = events[0];
        // Another agent's run (or a cluster's) in the same stream is not this agent's.
        return first?.type === AgentEventType.RunStarted && mine(first) ? events : undefined;
      },
      reopen: async () => log,
      async *unfinished(onProblem) {
        const starts = await listRunStarts(nc, { prefix, limit: RESUME_SCAN_LIMIT, accept: mine });
        for (const started of starts.reverse()) {
          let events;
          try {
            const read = await store.read(started.traceId);
            const [damage] = read.problems;
            if (damage !== undefined) throw new RedflowError(errorInfo(damage.code, `event ${damage.position}: ${damage.message}`));
            events = read.events;
          } catch (error) {
            onProblem(`${store.stream} run ${started.traceId}`, error);
            continue;
          }
          const last = events.at(-1);
          if (last !== undefined && !isTerminal(last)) yield { traceId: started.traceId, events, log };
        }
      },
      async recent(running, limit) {
        const runs: RecentRun[] = [];
        for (const started of await listRunStarts(nc, { prefix, limit, accept: mine })) {
          const { events } = await store.read(started.traceId);
          const run = recentRun(events, running, { replay: `redflow replay ${started.traceId} --nats ${servers} --prefix ${prefix} --steps` });
          if (run !== undefined) runs.push(run);
        }
        return runs;
      },
      async close() {
        await store.close();
        await nc.close();
      },
    };
  } catch (error) {
    await nc.close().catch(() => undefined);
    if (error instanceof RedflowError) throw error;
    throw new RedflowError(errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `the JetStream log cannot be opened: ${String(error)}`), { cause: error });
  }
}
