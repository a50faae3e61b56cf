import { setTimeout as sleep } from 'node:timers/promises';
import { KV_SERVER_HINT, isWrongLastSequence, kvBucketHint, kvFailure } from './kvErrors.js';
import { Kvm, type KV, type KvEntry, type KvOptions } from '@nats-io/kv';
import { PermissionViolationError, TimeoutError, headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { ToolResult } from '../../actors/tool.js';
import { bucketReplication, replicationRefused, type BucketReplication } from '../jetstream/replication.js';
import { plainToolResult, parseToolResultRecord, type DoneToolResultRecord, type RunningToolResultRecord, type ToolResultRecord } from './toolResultRecords.js';
import {
  checkLeaseMs,
  checkToolResultKey,
  type Claim,
  type StoredToolResult,
  type ToolResultStore,
} from '../../actors/toolResults/toolResultStore.js';

/** Options of {@link createNatsKvToolResultStore}. */
export interface NatsKvToolResultStoreOptions {
  /**
   * The KV bucket (letters, digits, `_`, `-`); created when missing. Use
   * `Storage.toolResultsBucket(prefix)` so every tool worker of a prefix shares it.
   */
  readonly bucket: string;
  /**
   * How long a key is kept after its last write, in ms (the bucket's `max_age`): stored results
   * and abandoned leases then vanish. Set it well above the longest time a run may wait to be
   * resumed: a call re-sent after its result expired is executed again. Only applied when this
   * store creates the bucket. Default: kept until deleted.
   */
  readonly ttlMs?: number;
  /**
   * Largest stored record, in bytes of JSON. Default 1 MiB, or the server's `max_payload` when
   * that is smaller. Also the bucket's `maxValueSize` when the bucket is created.
   */
  readonly maxValueBytes?: number;
  /** Replicas and placement of the bucket when this store creates it. */
  readonly replication?: BucketReplication;
}

/** A key's current entry: its record (undefined when unknown or deleted) and revision (0: never written). */
interface Current {
  readonly record: ToolResultRecord | undefined;
  readonly revision: number;
  /** Server time of the entry, ms since the epoch. */
  readonly at: number;
}

const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;
/** Revision-checked writes tried per operation before giving up; each failure means another writer got in. */
const WRITE_ATTEMPTS = 10;

/**
 * The KV key of a (valid) idempotency key: each `:` becomes `.`. KV keys may not contain `:`, while
 * `.` separates subject tokens and never occurs in a valid idempotency key, so `run-1:2` is stored
 * under `run-1.2` and distinct idempotency keys stay distinct keys.
 *
 * @example
 * ```ts
 * toolResultKvKey('run-7f3a:2'); // 'run-7f3a.2'
 * ```
 */
export function toolResultKvKey(key: string): string {
  checkToolResultKey(key);
  return key.replaceAll(':', '.');
}

/**
 * Creates (or opens) a JetStream KV bucket and returns a {@link ToolResultStore} on it, shared by
 * every tool worker that opens the same bucket: the store that makes a re-sent tool call happen
 * once in distributed mode.
 *
 * **One value per key**, `{ v: 1, state: 'running', owner, leaseMs }` while a worker executes the
 * call and `{ v: 1, state: 'done', owner, result }` once it is stored; the key is the idempotency key
 * with `:` replaced by `.` ({@link toolResultKvKey}): `serveIdempotentTool` keys calls per tool, so
 * a tool's results are under `<tool>.<traceId>.<iteration>`.
 *
 * **Confined users.** Keys are read by direct gets naming their subject, so a NATS user allowed
 * only its own tool's keys (publish on `$KV.<bucket>.<tool>.>` and
 * `$JS.API.DIRECT.GET.KV_<bucket>.$KV.<bucket>.<tool>.>`, see deploy/nats/redflow.conf) can use
 * the store. Such a user may not look the bucket up or create it: refused that, the store binds to
 * the existing bucket, which must have been made first (by a worker of a user that may, or
 * `nats kv add`), with direct gets.
 *
 * **Exactly one claimer.** Every write is revision-checked: `kv.create` for an unknown key,
 * `kv.update(key, value, revision)` otherwise, which the server refuses when anyone wrote the key
 * since it was read. Of concurrent claimers exactly one write lands; the others read again and see
 * `busy`. `complete` and `renew` work the same way, so a result is never overwritten. A call
 * costs two round trips when nothing competes: a claim tries `kv.create` before reading, and the
 * completion writes at the revision of the claim; a write the server refuses reads the key and
 * decides again.
 *
 * **Reads from any replica.** A direct get is answered by any replica of the bucket, also one
 * behind its leader or cut off from its peers by a partition. A read alone never gives a lease up:
 * a renewal that reads the key as another owner's (or as absent) writes what it read again at the
 * revision read, and answers `false` only when that write lands (the other owner's lease then
 * runs from that write); where the replica is cut off the write fails and the renewal is tried
 * again. A `done` read needs no such check: replicas hold only what a quorum committed, and a
 * stored result never changes. The path without contention costs what it did: no read at all.
 *
 * **Leases use the server's clock.** A running key's lease ends at the server timestamp of its
 * last write (the claim or a `renew`) plus `leaseMs`, compared with this process's clock: worker
 * clocks must be close to the server's (NTP); a worker whose clock is `s` ms ahead sees leases end
 * `s` ms early. The `until` of a `claimed` answer is this process's estimate.
 *
 * **Large results.** A result whose record would exceed `maxValueBytes` is stored (and answered) as
 * a `TOOL_RESPONSE_TOO_LARGE` failure instead: the call ran, but its output cannot be kept or sent.
 *
 * **Errors.** An invalid key or option fails with `TOOL_RESULT_STORE_FAILED` before any request; an
 * unreachable server, a timeout, a deleted bucket or a key under heavy contention fails with
 * `TOOL_RESULT_STORE_FAILED`, retryable, with a hint; a value that is not a record this store wrote
 * fails with `TOOL_RESULT_STORE_FAILED` naming bucket and key.
 *
 * @param nc an open connection; the store does not close it.
 * @example
 * ```ts
 * const nc = await connectNats({ servers: '127.0.0.1:4222' });
 * const store = await createNatsKvToolResultStore(nc, { bucket: Storage.toolResultsBucket('redflow'), ttlMs: 7 * 24 * 3600_000 });
 * serveIdempotentTool(createNatsTransport(nc), Subject.tool('redflow', 'send_mail'), sendMail, store);
 * ```
 */
export async function createNatsKvToolResultStore(nc: NatsConnection, options: NatsKvToolResultStoreOptions): Promise<ToolResultStore> {
  const { bucket } = options;
  if (typeof bucket !== 'string' || !/^[-\w]+$/.test(bucket)) {
    throw new RedflowError({
      code: ErrorCode.TOOL_RESULT_STORE_FAILED,
      message: `invalid NATS KV bucket name ${JSON.stringify(String(bucket))}`,
      hint: "a bucket name is letters, digits, '_' and '-'",
    });
  }
  const maxPayload = nc.info?.max_payload;
  const maxValueBytes = options.maxValueBytes ?? Math.min(DEFAULT_MAX_VALUE_BYTES, maxPayload ?? Infinity);
  checkIntegerOption('maxValueBytes', maxValueBytes, 64, maxPayload ?? Number.MAX_SAFE_INTEGER);
  if (options.ttlMs !== undefined) checkIntegerOption('ttlMs', options.ttlMs, 1000, Number.MAX_SAFE_INTEGER);

  let opened: { readonly kv: KV; readonly bound: boolean };
  try {
    opened = await openBucket(nc, bucket, {
      history: 1,
      maxValueSize: maxValueBytes,
      ...(options.ttlMs !== undefined && { ttl: options.ttlMs }),
      ...bucketReplication(options.replication),
    });
  } catch (error) {
    throw replicationRefused(`the tool-results bucket ${bucket}`, options.replication, error) ?? fail(`cannot open NATS KV bucket ${bucket}`, error, KV_SERVER_HINT, true);
  }
  const { kv, bound } = opened;
  // A bound store never saw the bucket: a read that times out may be a missing bucket.
  const readHint = (error: unknown): string =>
    bound && causedBy(error, TimeoutError)
      ? `check that the bucket ${bucket} exists with direct gets: this NATS user may not create it, a \`tool\` worker (deploy/nats/redflow.conf) or \`nats kv add ${bucket} --history 1\` does`
      : kvBucketHint(bucket, error);

  const where = (key: string): string => `idempotency key ${key} in NATS KV bucket ${bucket} (key ${toolResultKvKey(key)})`;

  const read = async (key: string): Promise<Current> => {
    let entry: KvEntry | null;
    try {
      entry = await kv.get(toolResultKvKey(key));
    } catch (error) {
      throw fail(`cannot read ${where(key)}`, error, readHint(error), true);
    }
    if (entry === null) return { record: undefined, revision: 0, at: 0 };
    const at = entry.created.getTime();
    if (entry.operation !== 'PUT') return { record: undefined, revision: entry.revision, at };
    return { record: parseToolResultRecord(entry, where(key)), revision: entry.revision, at };
  };

  /** Writes `record` if the key is still at `revision`; `undefined` when another writer got in first. */
  const write = async (key: string, record: ToolResultRecord, revision: number): Promise<number | undefined> => {
    const kvKey = toolResultKvKey(key);
    try {
      return revision > 0 ? await kv.update(kvKey, JSON.stringify(record), revision) : await kv.create(kvKey, JSON.stringify(record));
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined;
      throw fail(`cannot write ${where(key)}`, error, kvBucketHint(bucket, error), true);
    }
  };

  /**
   * Whether the key is still as `current` says, confirmed by writing the same state again at the
   * revision read: a replica behind answers reads, never writes. The record read is rewritten as
   * it is (its server timestamp moves on: another owner's lease is extended by the time since its
   * last write); a key read as absent gets a delete marker, written only if the key has no entry
   * at all (nats.js's `delete` checks no revision 0).
   */
  const stillAsRead = async (key: string, current: Current): Promise<boolean> => {
    if (current.record !== undefined) return (await write(key, current.record, current.revision)) !== undefined;
    const kvKey = toolResultKvKey(key);
    try {
      if (current.revision > 0) await kv.delete(kvKey, { previousSeq: current.revision });
      else await jetstream(nc).publish(`$KV.${bucket}.${kvKey}`, undefined, { headers: absentMarker() });
      return true;
    } catch (error) {
      if (isWrongLastSequence(error)) return false;
      throw fail(`cannot write ${where(key)}`, error, kvBucketHint(bucket, error), true);
    }
  };

  // The revision each key this process holds was last written at (its claim or renewal): while
  // the key is still there, nobody else wrote it, so the next write needs no read first. A write at
  // a stale revision is refused by the server and falls back to reading the key.
  const held = new Map<string, { readonly owner: string; readonly revision: number }>();
  const writeIfHeld = async (key: string, owner: string, record: ToolResultRecord): Promise<number | undefined> => {
    const mine = held.get(key);
    return mine?.owner === owner ? write(key, record, mine.revision) : undefined;
  };

  const contended = (key: string, what: string): RedflowError =>
    new RedflowError({
      code: ErrorCode.TOOL_RESULT_STORE_FAILED,
      message: `${what} ${where(key)} lost ${WRITE_ATTEMPTS} revision checks in a row to other writers`,
      hint: 'many workers write this key at once; try again',
      retryable: true,
    });

  /** The `done` record of `result`, or of a TOOL_RESPONSE_TOO_LARGE failure when it does not fit. */
  const doneRecord = (key: string, owner: string, result: ToolResult): DoneToolResultRecord => {
    const record: DoneToolResultRecord = { v: 1, state: 'done', owner, result: plainToolResult(result) };
    const bytes = Buffer.byteLength(JSON.stringify(record), 'utf8');
    if (bytes <= maxValueBytes) return record;
    return {
      v: 1,
      state: 'done',
      owner,
      result: {
        ok: false,
        error: errorInfo(
          ErrorCode.TOOL_RESPONSE_TOO_LARGE,
          `the result of ${key} is ${bytes} bytes of JSON, over the ${maxValueBytes} bytes a stored tool result may have; the call ran, its output was dropped`,
          { hint: 'make the tool return less' },
        ),
      },
    };
  };

  return {
    async claim(key, owner, leaseMs): Promise<Claim> {
      checkToolResultKey(key);
      checkLeaseMs(leaseMs);
      const running: RunningToolResultRecord = { v: 1, state: 'running', owner, leaseMs };
      // Most keys are new: create first, and read only when the key turns out to exist.
      let started = Date.now();
      let written = await write(key, running, 0);
      for (let attempt = 1; written === undefined && attempt <= WRITE_ATTEMPTS; attempt += 1) {
        const current = await read(key);
        const { record } = current;
        if (record?.state === 'done') return { kind: 'stored', ...stored(key, record, current.at) };
        if (record?.state === 'running') {
          const until = current.at + record.leaseMs;
          if (until > Date.now()) return { kind: 'busy', owner: record.owner, until };
        }
        started = Date.now();
        written = await write(key, running, current.revision);
      }
      if (written === undefined) throw contended(key, 'claiming');
      held.set(key, { owner, revision: written });
      return { kind: 'claimed', until: started + leaseMs };
    },

    async renew(key, owner, leaseMs) {
      checkToolResultKey(key);
      checkLeaseMs(leaseMs);
      const running: RunningToolResultRecord = { v: 1, state: 'running', owner, leaseMs };
      // Still at the revision this owner wrote last: nobody else wrote it, so it is still ours.
      let written = await writeIfHeld(key, owner, running);
      for (let attempt = 1; written === undefined && attempt <= WRITE_ATTEMPTS; attempt += 1) {
        const current = await read(key);
        if (current.record?.state === 'running' && current.record.owner === owner) {
          written = await write(key, running, current.revision);
          continue;
        }
        // Not this owner's, says the read. A `done` is final, so true wherever it was read; anything
        // else may come from a replica behind the one the lease was written on (a direct get is
        // answered by any replica, one cut off from its peers too): giving the lease up on it would
        // let it run out while the call executes, and another worker execute it again.
        if (current.record?.state === 'done' || (await stillAsRead(key, current))) {
          held.delete(key);
          return false;
        }
      }
      if (written === undefined) throw contended(key, 'renewing the lease on');
      held.set(key, { owner, revision: written });
      return true;
    },

    async complete(key, owner, result) {
      checkToolResultKey(key);
      const record = doneRecord(key, owner, result);
      try {
        const started = Date.now();
        // Nobody wrote the key since our claim (or renewal): nothing can be stored there yet.
        if ((await writeIfHeld(key, owner, record)) !== undefined) return stored(key, record, started);
        for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
          const current = await read(key);
          if (current.record?.state === 'done') return stored(key, current.record, current.at);
          const now = Date.now();
          if ((await write(key, record, current.revision)) !== undefined) return stored(key, record, now);
          // Another writer got in (a renewal, a takeover or another completion): look again.
          await sleep(Math.random() * 5 * attempt);
        }
        throw contended(key, 'storing the result of');
      } finally {
        held.delete(key);
      }
    },

    async release(key, owner) {
      checkToolResultKey(key);
      const mine = held.get(key);
      held.delete(key);
      let revision = mine?.owner === owner ? mine.revision : undefined;
      for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
        if (revision === undefined) {
          const current = await read(key);
          if (current.record?.state !== 'running' || current.record.owner !== owner) return;
          revision = current.revision;
        }
        try {
          await kv.delete(toolResultKvKey(key), { previousSeq: revision });
          return;
        } catch (error) {
          if (!isWrongLastSequence(error)) throw fail(`cannot release ${where(key)}`, error, kvBucketHint(bucket, error), true);
          revision = undefined;
        }
      }
      throw contended(key, 'releasing');
    },

    async get(key) {
      checkToolResultKey(key);
      const current = await read(key);
      return current.record?.state === 'done' ? stored(key, current.record, current.at) : undefined;
    },
  };
}

function stored(key: string, record: DoneToolResultRecord, at: number): StoredToolResult {
  return { key, result: plainToolResult(record.result), owner: record.owner, completedAt: at };
}

/** The headers of a KV delete marker written only where the key has no entry (revision 0). */
function absentMarker(): MsgHdrs {
  const marker = headers();
  marker.set('KV-Operation', 'DEL');
  marker.set('Nats-Expected-Last-Subject-Sequence', '0');
  return marker;
}

/**
 * Opens the bucket, creating it when missing. A user confined to one tool's keys
 * (deploy/nats/redflow.conf) may not look the bucket's stream up, which would list every tool's
 * keys, let alone create it: refused that (once, at the start), it binds to the existing bucket
 * without a request (`bound`).
 */
async function openBucket(nc: NatsConnection, bucket: string, config: Partial<KvOptions>): Promise<{ kv: KV; bound: boolean }> {
  const kvm = new Kvm(nc);
  try {
    return { kv: await kvm.create(bucket, config), bound: false };
  } catch (error) {
    if (!causedBy(error, PermissionViolationError)) throw error;
    return { kv: await kvm.open(bucket, { allow_direct: true }), bound: true };
  }
}

/** True when `error`, or an error it was caused by, is a `type`. */
function causedBy(error: unknown, type: abstract new (...args: never[]) => Error): boolean {
  let cause: unknown = error;
  while (cause instanceof Error) {
    if (cause instanceof type) return true;
    cause = (cause as Error).cause;
  }
  return false;
}

/** This store's failure. */
function fail(message: string, error: unknown, hint: string, retryable: boolean): RedflowError {
  return kvFailure(ErrorCode.TOOL_RESULT_STORE_FAILED, message, error, hint, retryable);
}

function checkIntegerOption(name: string, value: number, min: number, max: number): void {
  if (Number.isInteger(value) && value >= min && value <= max) return;
  throw new RedflowError({
    code: ErrorCode.TOOL_RESULT_STORE_FAILED,
    message: `NATS KV tool result store option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
  });
}
