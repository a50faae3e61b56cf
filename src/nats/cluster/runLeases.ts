import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError, jetstream } from '@nats-io/jetstream';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { Storage } from '../../actors/subjects.js';
import { watchReconnects } from '../reconnects.js';
import { storeUnavailable } from '../jetstream/storeUnavailable.js';
import { bucketReplication, replicationRefused, type BucketReplication } from '../jetstream/replication.js';
import { createKvEntry, deleteKvEntry, lastStoredOn } from '../jetstream/storeRequests.js';
import { WatchedRecord, type KnownRecord, type ReadRecord, type RunLeases, type RunRecord } from './runRecords.js';

export type { AnswerClaim, RunLeases, RunRecord } from './runRecords.js';

/** How long the watch of the run records may take to be made (see openRunLeases). */
const WATCH_CREATE_TIMEOUT_MS = 30_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Reads of a run's record that `mine` and `register` make while their write is refused (each refusal: the read was behind, or the record changed). */
const LEADER_READS = 5;

/** How the server refuses a create of a key that holds a value. */
const KEY_EXISTS: ReadonlySet<number> = new Set([JetStreamApiCodes.StreamWrongLastSequence, JetStreamApiCodes.StreamWrongLastSequenceUnknown]);

/** A run record as stored (a KV entry's value and revision); undefined when it is no record. */
function parseRecord(entry: { seq: number; data: Uint8Array }): ReadRecord | undefined {
  try {
    return { record: JSON.parse(decoder.decode(entry.data)) as RunRecord, revision: entry.seq };
  } catch {
    return undefined;
  }
}

/** What the heartbeat rule says of a run's owner (see "Outages" on {@link RunLeases}). */
type OwnerVerdict = 'live' | 'missing' | 'dead';

/**
 * How long `orphan()` may watch an owner before it must decide: the rule needs one whole lease of a
 * working bucket, so a few leases, and never less than an election of the bucket takes.
 */
const ORPHAN_VERDICT_LEASES = 4;
const ORPHAN_VERDICT_MIN_MS = 10_000;

/**
 * Opens (creating if needed) the run and heartbeat buckets of `prefix`, starts this worker's
 * heartbeat, and watches the run records.
 *
 * @example
 * ```ts
 * const leases = await openRunLeases(nc, { prefix: 'redflow', owner: 'core-1', leaseMs: 3000 });
 * ```
 */
export async function openRunLeases(
  nc: NatsConnection,
  options: { prefix: string; owner: string; leaseMs: number; replication?: BucketReplication },
): Promise<RunLeases> {
  const { owner } = options;
  const kvm = new Kvm(nc);
  const replication = bucketReplication(options.replication);
  let runs: KV;
  let leases: KV;
  let leaseMs: number;
  try {
    runs = await kvm.create(Storage.runsBucket(options.prefix), { history: 1, ...replication });
    leases = await kvm.create(Storage.leasesBucket(options.prefix), { history: 1, ttl: options.leaseMs, ...replication });
    // An existing bucket keeps the expiry it was made with: heartbeat at its pace, not ours, or a
    // longer lease of ours would let our heartbeat expire between beats.
    const status = await leases.status();
    const ttl = status.ttl;
    leaseMs = ttl > 0 ? ttl : options.leaseMs;
    // Beats and looks that give up within a beat: a beat stuck in a leader election for the
    // client's default 5 s would keep a live worker's heartbeat away long after the bucket is back.
    // Bound to the bucket just made or found, asking the server nothing more.
    leases = await new Kvm(jetstream(nc, { timeout: Math.max(500, Math.floor(leaseMs / 3)), checkAPI: false })).open(Storage.leasesBucket(options.prefix), {
      bindOnly: true,
      allow_direct: status.streamInfo.config.allow_direct === true,
    });
    await leases.put(owner, encoder.encode(JSON.stringify({ owner, since: new Date().toISOString() })));
  } catch (error) {
    const refused = replicationRefused(`the run buckets of ${options.prefix}`, options.replication, error);
    if (refused) throw refused;
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `cannot open the run buckets: ${(error as Error).message}`, {
        hint: 'is nats-server running with JetStream (-js)?',
        retryable: true,
      }),
      { cause: error },
    );
  }

  // Every run record, kept current by a watch: finding orphans reads no run from the server. Every
  // core worker sees every run's record come and go, most of them within seconds: a record is read
  // (JSON) only when a scan or a claim looks at it, and this worker's own writes are known already.
  const known = new Map<string, KnownRecord>();
  // Its consumer is made by the meta leader, which a loaded cluster that has just caught up may
  // take longer than the client's default 5 s to answer: each retry would ask for one more.
  const watching = new Kvm(jetstream(nc, { timeout: WATCH_CREATE_TIMEOUT_MS, checkAPI: false })).open(Storage.runsBucket(options.prefix), { bindOnly: true });
  const watch = await watching.then((watched) => watched.watch()).catch((error: unknown) => {
    throw new RedflowError(errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `cannot watch the run records: ${(error as Error).message}`, { hint: 'is nats-server running with JetStream (-js)?', retryable: true }), { cause: error });
  });
  void (async () => {
    for await (const entry of watch) {
      if (entry.operation !== 'PUT') {
        known.delete(entry.key);
        continue;
      }
      if (known.get(entry.key)?.revision === entry.revision) continue;
      // A copy: the value is a view of the buffer the message came in, which it would keep alive.
      known.set(entry.key, new WatchedRecord(entry.value.slice(), entry.revision));
    }
  })();
  /** The records known, without the entries that are no record of ours. */
  const knownRecords = (): RunRecord[] => {
    const records: RunRecord[] = [];
    for (const entry of known.values()) if (entry.record !== undefined) records.push(entry.record);
    return records;
  };
  // The bucket's subjects, for the writes made once per run (see storeRequests.ts).
  const runKeys = `$KV.${Storage.runsBucket(options.prefix)}.`;

  // Since when this worker has seen each owner's heartbeat missing with the bucket working (see
  // "Outages" above), and when it last looked: any failed read or write of the bucket forgets all.
  const missingSince = new Map<string, { since: number; checked: number }>();
  const noteOutage = () => missingSince.clear();
  let closed = false;
  let beating = false;
  let retry: NodeJS.Timeout | undefined;
  const beat = async (): Promise<void> => {
    if (beating || closed) return;
    beating = true;
    try {
      await leases.put(owner, encoder.encode(JSON.stringify({ owner, at: new Date().toISOString() })));
    } catch {
      noteOutage();
      // Back as soon as the bucket is: not a whole beat later, when a long outage may have expired it.
      clearTimeout(retry);
      retry = setTimeout(() => void beat(), 200);
      retry.unref();
    } finally {
      beating = false;
    }
  };
  const heartbeat = setInterval(() => void beat(), Math.max(100, Math.floor(leaseMs / 3)));
  heartbeat.unref();
  const stopReconnects = watchReconnects(nc, () => {
    noteOutage();
    void beat();
  });

  /** A run's record as the bucket holds it now (the watch may lag a write by another worker). */
  const fresh = async (traceId: string): Promise<ReadRecord | undefined> => {
    const entry = await runs.get(traceId);
    if (!entry || entry.operation !== 'PUT') return undefined;
    try {
      return { record: entry.json<RunRecord>(), revision: entry.revision };
    } catch {
      return undefined;
    }
  };

  /** The run's record as the runs bucket's leader holds it (a direct get may come from a replica behind). */
  const leaderRead = async (traceId: string): Promise<ReadRecord | undefined> => {
    const entry = await lastStoredOn(nc, `KV_${Storage.runsBucket(options.prefix)}`, `${runKeys}${traceId}`);
    return entry === null || entry.data.byteLength === 0 ? undefined : parseRecord(entry);
  };

  /**
   * Removes `record` (a start refused after its write's answer was lost) if the bucket holds it
   * still as written: asked again every 200 ms while the bucket fails, for up to 30 s. A later
   * attempt of the same start, recorded since (another `startedAt`), is left alone.
   */
  const removeUnstarted = async (record: RunRecord): Promise<void> => {
    for (const giveUpAt = Date.now() + 30_000; !closed && Date.now() < giveUpAt; ) {
      try {
        const landed = await leaderRead(record.traceId);
        if (landed === undefined || landed.record.owner !== owner || landed.record.startedAt !== record.startedAt) return;
        await runs.delete(record.traceId, { previousSeq: landed.revision });
        known.delete(record.traceId);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };

  // One read per owner, not a listing of the bucket: nats.js's `kv.keys()` never ends when an
  // entry expires between the listing's start and its delivery, and heartbeats here do expire
  // (it stalled the takeover scans, and `redflow resume --nats`, for good).
  // A heartbeat deleted (not expired) is a worker that said goodbye as it closed: gone at once.
  // One that expired is only missing: an election of the bucket longer than the lease expires them all.
  const heartbeatOf = async (who: string): Promise<'beating' | 'deleted' | 'missing'> => {
    try {
      const entry = await leases.get(who);
      return entry === null ? 'missing' : entry.operation === 'PUT' ? 'beating' : entry.operation === 'DEL' ? 'deleted' : 'missing';
    } catch (error) {
      noteOutage();
      throw error;
    }
  };
  /**
   * The heartbeat rule, the one place that calls an owner dead: `dead` once its heartbeat has been
   * missing for a whole lease of a working bucket as this worker saw it (or at once when the owner
   * deleted it, closing), `missing` before that, `live` while it beats. Throws (and starts every
   * lease again) when the bucket cannot be read.
   */
  const ownerVerdicts = async (owners: Iterable<string>): Promise<Map<string, OwnerVerdict>> => {
    const distinct = [...new Set(owners)];
    const heartbeats = await Promise.all(distinct.map(heartbeatOf));
    const now = Date.now();
    const verdicts = new Map<string, OwnerVerdict>();
    for (const [i, who] of distinct.entries()) {
      if (heartbeats[i] !== 'missing') {
        missingSince.delete(who);
        verdicts.set(who, heartbeats[i] === 'beating' ? 'live' : 'dead');
        continue;
      }
      const since = missingSince.get(who)?.since ?? now;
      missingSince.set(who, { since, checked: now });
      verdicts.set(who, now - since >= leaseMs ? 'dead' : 'missing');
    }
    return verdicts;
  };

  return {
    leaseMs,
    async register(partial) {
      const record: RunRecord = { ...partial, owner };
      const bytes = encoder.encode(JSON.stringify(record));
      const isThis = (held: ReadRecord | undefined) => held !== undefined && held.record.owner === owner && held.record.startedAt === record.startedAt;
      try {
        for (let attempt = 0; attempt < LEADER_READS; attempt++) {
          const revision = await createKvEntry(nc, runKeys, record.traceId, bytes);
          if (revision !== undefined) {
            known.set(record.traceId, { record, revision });
            return true;
          }
          // The key was written before. Read where the write was refused, at the bucket's leader: a
          // direct get may come from a replica still catching up that has not seen the record, and
          // the run would be refused as taken. The record may be this very one: a write sent again
          // after a reconnect (the request mux does) is refused because of the first.
          const held = await lastStoredOn(nc, `KV_${Storage.runsBucket(options.prefix)}`, `${runKeys}${record.traceId}`);
          if (held !== null && held.data.byteLength > 0) {
            const read = parseRecord(held);
            if (!isThis(read)) return false;
            known.set(record.traceId, read!);
            return true;
          }
          // Deleted (a record dropped when its run never logged): written again at the marker's revision.
          if (held === null) continue;
          try {
            known.set(record.traceId, { record, revision: await runs.update(record.traceId, bytes, held.seq) });
            return true;
          } catch (error) {
            if (!(error instanceof JetStreamApiError && KEY_EXISTS.has(error.code))) throw error;
          }
        }
        throw new Error(`the record of ${record.traceId} kept changing under its create`);
      } catch (error) {
        // Anything but a record of another run is an outage the client may try again after (a
        // timeout while the bucket elects a leader). A write whose answer was lost may have landed:
        // then the run is ours, and refusing the start would leave a record that makes the client's
        // next attempt RUN_TRACE_ID_TAKEN.
        const landed = await leaderRead(record.traceId).catch(() => undefined);
        if (isThis(landed)) {
          known.set(record.traceId, landed!);
          return true;
        }
        // Not seen, but it may land or have landed: a record no run follows, naming a live worker,
        // would make every next attempt of the client RUN_TRACE_ID_TAKEN. Removed once readable.
        void removeUnstarted(record);
        throw storeUnavailable(`cannot record run ${record.traceId}`, error);
      }
    },
    async claim(record) {
      // Read now, not from the watch, which may lag; and the record must still name the owner that
      // was found dead: a watch that has caught up with another worker's claim would otherwise
      // hand over that worker's revision, and the update would take a live worker's run.
      const seen = await fresh(record.traceId);
      if (!seen || seen.record.waiting !== undefined) return false;
      // Claimed by this worker already (a takeover to try again, or a claim whose answer was lost).
      if (seen.record.owner === owner) {
        known.set(record.traceId, seen);
        return true;
      }
      if (seen.record.owner !== record.owner) return false;
      const mine: RunRecord = { ...seen.record, owner };
      try {
        const revision = await runs.update(record.traceId, encoder.encode(JSON.stringify(mine)), seen.revision);
        known.set(record.traceId, { record: mine, revision });
        return true;
      } catch {
        // Lost the race, or the update went through and its answer did not: the record says which.
        const now = await fresh(record.traceId);
        if (now?.record.owner !== owner) return false;
        known.set(record.traceId, now);
        return true;
      }
    },
    owns: (traceId) => known.get(traceId)?.record?.owner === owner,
    async stillOwns(traceId) {
      let current;
      try {
        current = await fresh(traceId);
      } catch {
        return true;
      }
      // No record: the run has just ended (its record goes first), no other worker holds it.
      if (current === undefined) return true;
      if (current.record.owner !== owner) return false;
      known.set(traceId, current);
      return true;
    },
    async mine(traceId) {
      // A read may come from a replica cut off from its leader, behind a takeover: the record
      // written again at the revision read is this worker's only if no one has written it since.
      // A refused rewrite means the read was behind: read again, from the bucket's leader.
      for (let attempt = 0; attempt < LEADER_READS; attempt++) {
        const current = attempt === 0 ? await fresh(traceId) : await leaderRead(traceId);
        if (current?.record.owner !== owner) return undefined;
        try {
          const revision = await runs.update(traceId, encoder.encode(JSON.stringify(current.record)), current.revision);
          known.set(traceId, { record: current.record, revision });
          return current.record;
        } catch (error) {
          if (!(error instanceof JetStreamApiError && KEY_EXISTS.has(error.code))) throw error;
        }
      }
      return undefined;
    },
    async finish(traceId) {
      known.delete(traceId);
      await deleteKvEntry(nc, runKeys, traceId).catch(() => undefined);
    },
    async orphans() {
      const candidates = knownRecords().filter((record) => record.waiting === undefined && record.owner !== owner);
      // Owners no one has asked about for a lease are forgotten: their runs have ended or moved.
      const now = Date.now();
      for (const [who, { checked }] of missingSince) if (now - checked > leaseMs) missingSince.delete(who);
      if (candidates.length === 0) return [];
      const verdicts = await ownerVerdicts(candidates.map((record) => record.owner));
      return candidates.filter((record) => verdicts.get(record.owner) === 'dead');
    },
    async orphan(traceId) {
      // Asked once, so watched here until the rule decides: the owner beats again (not an orphan),
      // or its heartbeat stays missing for a whole lease of a working bucket (an orphan).
      const giveUpAt = Date.now() + Math.max(ORPHAN_VERDICT_LEASES * leaseMs, ORPHAN_VERDICT_MIN_MS);
      for (;;) {
        try {
          const current = await fresh(traceId);
          if (!current || current.record.waiting !== undefined || current.record.owner === owner) return undefined;
          const verdict = (await ownerVerdicts([current.record.owner])).get(current.record.owner);
          if (verdict === 'live') return undefined;
          if (verdict === 'dead') return current.record;
        } catch (error) {
          noteOutage();
          if (Date.now() > giveUpAt) throw error;
        }
        if (Date.now() > giveUpAt) {
          throw new RedflowError(
            errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `cannot tell whether the owner of run ${traceId} is alive: the heartbeat bucket kept failing`, {
              hint: 'the cluster is electing leaders or out of reach; try again once `nats stream info KV_<prefix>-leases` shows a leader',
              retryable: true,
            }),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.max(50, Math.floor(leaseMs / 10))));
      }
    },
    async park(traceId, waiting) {
      const seen = known.get(traceId);
      const current = seen?.record !== undefined ? { record: seen.record, revision: seen.revision } : await fresh(traceId);
      if (!current || current.record.owner !== owner) return;
      const { answer: _answered, ...rest } = current.record;
      const parked: RunRecord = { ...rest, waiting };
      try {
        const revision = await runs.update(traceId, encoder.encode(JSON.stringify(parked)), current.revision);
        known.set(traceId, { record: parked, revision });
      } catch {
        // Another worker took the run meanwhile: it is theirs to park.
      }
    },
    async claimForAnswer(traceId, answer, fallback) {
      const current = await fresh(traceId);
      if (current && current.record.waiting === undefined) return { kind: 'owned', owner: current.record.owner };
      const { waiting: _waited, ...rest } = current?.record ?? fallback;
      const mine: RunRecord = { ...rest, owner, answer };
      try {
        const bytes = encoder.encode(JSON.stringify(mine));
        const revision = current ? await runs.update(traceId, bytes, current.revision) : await runs.create(traceId, bytes);
        known.set(traceId, { record: mine, revision });
        return { kind: 'claimed', record: mine };
      } catch {
        const now = await fresh(traceId);
        return { kind: 'owned', owner: now?.record.owner ?? 'another worker' };
      }
    },
    parked: () => knownRecords().filter((record) => record.waiting !== undefined && record.answer === undefined),
    async close() {
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(retry);
      stopReconnects();
      watch.stop();
      await leases.delete(owner).catch(() => undefined);
    },
  };
}
