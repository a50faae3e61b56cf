import { headers as natsHeaders, nanos, PermissionViolationError } from '@nats-io/transport-node';
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { Subject } from '../../actors/subjects.js';
import { storeUnavailable } from './storeUnavailable.js';
import { replicationRefused, streamReplication } from './replication.js';

/** How the trace stream is created when it is missing. */
export interface LogStreamOptions {
  readonly duplicateWindowMs: number;
  readonly storage?: 'file' | 'memory';
  readonly replicas?: number;
  readonly placementTags?: readonly string[];
}

/** JetStream's code for a stream created with a name another has (nats.js names no constant for it). */
const STREAM_NAME_IN_USE = 10058;
/** Messages copied per round trip when a stream of the earlier layout is moved. */
const COPY_BATCH = 256;

/**
 * Makes sure the trace stream exists and captures the log subjects `<prefix>.log.>`, creating it
 * when missing.
 *
 * A stream of the earlier layout captured `<prefix>.trace.>` itself, one message per step of a
 * run. It cannot stay so: the events are now published live on those subjects, one per message,
 * and the stream would store each of them a second time. Such a stream is moved once, in place
 * (same name, same permissions): it captures `<prefix>.log.>` too, each stored message is copied
 * in order to the log subject of the same run and type, the old messages are purged, and the
 * stream stops capturing `<prefix>.trace.>`. Every earlier run replays and can be resumed as
 * before. A move cut short is taken up again by the next open (copies carry an id, so a copy made
 * twice within the stream's duplicate window is stored once). Writers of the earlier version must
 * be stopped first: what they store after the move started is not copied. A user that may not
 * update the stream is refused with `LOG_STREAM_OLD_LAYOUT`.
 *
 * @example
 * ```ts
 * await ensureLogStream(jsm, js, 'REDFLOW_TRACE', 'redflow', { duplicateWindowMs: 3_600_000 });
 * ```
 */
export async function ensureLogStream(jsm: JetStreamManager, js: JetStreamClient, stream: string, prefix: string, options: LogStreamOptions): Promise<void> {
  const logs = Subject.allLogs(prefix);
  const traces = Subject.allTraces(prefix);
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(stream);
  } catch (error) {
    if (!(error instanceof JetStreamApiError) || error.code !== JetStreamApiCodes.StreamNotFound) throw storeUnavailable('cannot read the trace stream', error);
    return createLogStream(jsm, stream, logs, options);
  }
  const subjects = info.config.subjects ?? [];
  if (subjects.includes(traces)) return moveToLogSubjects(jsm, js, stream, prefix, info);
  if (subjects.includes(logs)) return;
  throw new RedflowError(
    errorInfo(ErrorCode.LOG_NOT_FOUND, `stream ${stream} exists but does not capture ${logs}`, {
      hint: `delete or fix the stream, or use another prefix`,
    }),
  );
}

async function createLogStream(jsm: JetStreamManager, stream: string, logs: string, options: LogStreamOptions): Promise<void> {
  try {
    await jsm.streams.add({
      name: stream,
      subjects: [logs],
      storage: options.storage === 'memory' ? StorageType.Memory : StorageType.File,
      ...streamReplication(options),
      duplicate_window: nanos(options.duplicateWindowMs),
    });
  } catch (error) {
    // Another worker created it at the same moment.
    if (error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE) return;
    throw replicationRefused(`the trace stream ${stream}`, options, error) ?? storeUnavailable(`cannot create the trace stream ${stream}`, error);
  }
}

/** The in-place move of a stream of the earlier layout (see {@link ensureLogStream}). */
async function moveToLogSubjects(jsm: JetStreamManager, js: JetStreamClient, stream: string, prefix: string, info: StreamInfo): Promise<void> {
  const logs = Subject.allLogs(prefix);
  const traces = Subject.allTraces(prefix);
  try {
    const config: Partial<StreamConfig> = { ...info.config };
    // Both at first: the copies go to the log subjects while the originals can still be purged by subject.
    const both = await jsm.streams.update(stream, { ...config, subjects: [...new Set([...(info.config.subjects ?? []), logs])] });
    const lastOld = both.state.last_seq;
    if (both.state.messages > 0) await copyTraceMessages(js, stream, prefix, both.state.first_seq, lastOld);
    await jsm.streams.purge(stream, { filter: traces, seq: lastOld + 1 });
    await jsm.streams.update(stream, { ...config, subjects: (info.config.subjects ?? []).filter((s) => s !== traces).concat(logs).filter((s, i, all) => all.indexOf(s) === i) });
  } catch (error) {
    if (refusedByPermissions(error)) {
      throw new RedflowError(
        errorInfo(ErrorCode.LOG_STREAM_OLD_LAYOUT, `stream ${stream} stores the log on ${traces}, the layout before the log subjects ${logs}, and this NATS user may not move it`, {
          hint: `stop the workers of the earlier version, then open the log once as a NATS user allowed to update ${stream} (redflow worker <flow> --role core, connected as an admin): it moves every stored run to ${prefix}.log.<traceId>.<type>, in place`,
        }),
        { cause: error },
      );
    }
    throw storeUnavailable(`cannot move stream ${stream} to the log subjects ${logs}`, error);
  }
}

/** Copies each stored message on `<prefix>.trace.…` up to `lastSeq` to `<prefix>.log.…`, in order. */
async function copyTraceMessages(js: JetStreamClient, stream: string, prefix: string, firstSeq: number, lastSeq: number): Promise<void> {
  const oldTraces = `${prefix}.trace.`;
  const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: firstSeq });
  try {
    let pending: Promise<unknown>[] = [];
    for (let done = false; !done; ) {
      const batch = await consumer.fetch({ max_messages: COPY_BATCH, expires: 2000 });
      let got = 0;
      for await (const message of batch) {
        got++;
        if (message.seq > lastSeq) {
          done = true;
          break;
        }
        if (message.subject.startsWith(oldTraces)) {
          const msgHeaders = natsHeaders();
          // Not of the form <traceId>:<seq> of the events' own ids (a trace id has no dots).
          msgHeaders.set('Nats-Msg-Id', `moved.${message.seq}`);
          // Published one after the other on one connection: stored in the order given.
          pending.push(js.publish(`${prefix}.log.${message.subject.slice(oldTraces.length)}`, message.data, { headers: msgHeaders }));
        }
        if (message.seq === lastSeq || message.info.pending === 0) done = true;
        if (done) break;
      }
      await Promise.all(pending);
      pending = [];
      if (got === 0) done = true;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
}

function refusedByPermissions(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof PermissionViolationError) return true;
  }
  return false;
}
