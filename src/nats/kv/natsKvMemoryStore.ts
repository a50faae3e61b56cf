import { setTimeout as sleep } from 'node:timers/promises';
import { KV_SERVER_HINT, isValueTooLarge, isWrongLastSequence, kvBucketHint, kvFailure } from './kvErrors.js';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { bucketReplication, replicationRefused, type BucketReplication } from '../jetstream/replication.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { MemoryRecord, MemoryStore } from '../../actors/memory.js';
import { checkConversationId, serializeMemory } from '../../actors/memory/inProcessMemoryStore.js';

/** Options of {@link createNatsKvMemoryStore}. */
export interface NatsKvMemoryStoreOptions {
  /** The KV bucket (letters, digits, `_`, `-`); created when missing. Default `redflow-memory`. */
  readonly bucket?: string;
  /** Revisions kept per conversation when the bucket is created (1–64). Default 1. */
  readonly history?: number;
  /**
   * Largest memory, in bytes of JSON, that `save` and `update` write. Default 1 MiB, or the
   * server's `max_payload` when that is smaller; it may not exceed `max_payload`. Also set as the
   * bucket's `maxValueSize` when the bucket is created.
   */
  readonly maxValueBytes?: number;
  /** How many times `update` reads, changes and writes before giving up. Default 5. */
  readonly updateAttempts?: number;
  /** Replicas and placement of the bucket when this store creates it. */
  readonly replication?: BucketReplication;
}

/**
 * A {@link MemoryStore} on NATS JetStream KV, with a conflict-free read-modify-write. See
 * {@link createNatsKvMemoryStore}.
 */
export interface NatsKvMemoryStore extends MemoryStore {
  /**
   * Reads the conversation's memory, passes it to `change` (a fresh copy, `undefined` when there is
   * none), and writes the result only if nobody wrote the conversation in between; otherwise reads
   * again and calls `change` again, up to `updateAttempts` times (`change` may therefore run more
   * than once and must not have side effects). Resolves to (a copy of) what was written.
   */
  update(conversationId: string, change: (memory: MemoryRecord | undefined) => MemoryRecord): Promise<MemoryRecord>;
}

/** Revisions remembered for `save`'s check; the oldest are forgotten first. */
const MAX_TRACKED_CONVERSATIONS = 10_000;
const DEFAULT_BUCKET = 'redflow-memory';
const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;
const DEFAULT_UPDATE_ATTEMPTS = 5;

/**
 * Creates (or opens) the KV bucket and returns a {@link MemoryStore} keeping each conversation's
 * memory as one JSON value in it: the `memory.kv` store of distributed mode. The contract is the
 * file store's: JSON objects only, `load` of an unknown conversation resolves to `undefined`,
 * `save` and `load` copy (the caller never aliases what is stored), a value that is not a JSON
 * object fails `load` with `MEMORY_FAILED` naming bucket and key, an invalid conversation id fails
 * with `MEMORY_KEY_INVALID` before any request, and a memory over `maxValueBytes` fails with
 * `MEMORY_FAILED` (nothing is written). A server that cannot be reached, a timeout or a vanished
 * bucket is `MEMORY_FAILED` too, retryable, with a hint.
 *
 * **Keys.** A conversation id becomes the KV key with each `.` replaced by `=` (ids never contain
 * `=`), so `conv.2` is stored under `conv=2` and every valid id is one valid, distinct key.
 *
 * **Concurrent writers: no lost turns.** Writes are never blind (last-writer-wins is not used):
 * - `update(id, change)` is the safe read-modify-write: it reads the value and its revision, applies
 *   `change`, and writes with `kv.update(key, value, revision)` (`kv.create` when there is no
 *   value), which the server refuses if anyone wrote the key since. On refusal it waits a few
 *   milliseconds, reads again and re-applies `change`, at most `updateAttempts` times; then it fails
 *   with `MEMORY_FAILED` (retryable). Any number of workers appending turns this way all land.
 * - `save(id, memory)` is a compare-and-set against the revision this store instance last saw for
 *   the conversation (by its `load`, `save` or `update`; none seen means "must not exist yet"). If
 *   another writer got in between, the key is read again: when it already holds exactly `memory`
 *   (a repeated save) that is success; otherwise `save` fails with `MEMORY_FAILED` (retryable) and
 *   writes nothing; the caller must `load` again, re-apply its change and `save`. A retry of the
 *   same stale `save` keeps failing until the caller loads again.
 * - Limit: revisions are remembered per store instance, not per `load` call. Two interleaved
 *   load/save pairs of one conversation **on the same instance** cannot be told apart, so code that
 *   shares one instance between concurrent runs of a conversation must use `update`.
 *
 * @param nc an open connection; the store does not close it.
 * @example
 * ```ts
 * import { connect } from '@nats-io/transport-node';
 *
 * const nc = await connect({ servers: '127.0.0.1:4222' });
 * const store = await createNatsKvMemoryStore(nc, { bucket: 'redflow-memory' });
 * await store.save('conv-1', { turns: [] });
 * await store.load('conv-1'); // { turns: [] }
 * await store.update('conv-1', (memory) => appendTurn(memory, turn, 20)); // safe with many workers
 * ```
 */
export async function createNatsKvMemoryStore(
  nc: NatsConnection,
  options: NatsKvMemoryStoreOptions = {},
): Promise<NatsKvMemoryStore> {
  const bucket = options.bucket ?? DEFAULT_BUCKET;
  if (typeof bucket !== 'string' || !/^[-\w]+$/.test(bucket)) {
    throw new RedflowError({
      code: ErrorCode.MEMORY_FAILED,
      message: `invalid NATS KV bucket name ${JSON.stringify(String(bucket))}`,
      hint: "a bucket name is letters, digits, '_' and '-'",
    });
  }
  const history = options.history ?? 1;
  checkIntegerOption('history', history, 1, 64);
  const updateAttempts = options.updateAttempts ?? DEFAULT_UPDATE_ATTEMPTS;
  checkIntegerOption('updateAttempts', updateAttempts, 1, 100);
  const maxPayload = nc.info?.max_payload;
  const maxValueBytes = options.maxValueBytes ?? Math.min(DEFAULT_MAX_VALUE_BYTES, maxPayload ?? Infinity);
  checkIntegerOption('maxValueBytes', maxValueBytes, 1, maxPayload ?? Number.MAX_SAFE_INTEGER);

  let kv: KV;
  try {
    kv = await new Kvm(nc).create(bucket, { history, maxValueSize: maxValueBytes, ...bucketReplication(options.replication) });
  } catch (error) {
    const refused = replicationRefused(`the memory bucket ${bucket}`, options.replication, error);
    if (refused) throw refused;
    throw fail(`cannot open NATS KV bucket ${bucket}`, error, KV_SERVER_HINT, true);
  }

  /** conversation id → the revision last seen (0: no value). Insertion order = age. */
  const revisions = new Map<string, number>();
  const remember = (conversationId: string, revision: number): void => {
    revisions.delete(conversationId);
    revisions.set(conversationId, revision);
    if (revisions.size > MAX_TRACKED_CONVERSATIONS) {
      const oldest = revisions.keys().next();
      if (oldest.done !== true) revisions.delete(oldest.value);
    }
  };
  const where = (conversationId: string): string =>
    `conversation ${conversationId} in NATS KV bucket ${bucket} (key ${kvKey(conversationId)})`;

  /** The current value and its revision (0 when the key never had one). */
  const read = async (conversationId: string): Promise<{ memory: MemoryRecord | undefined; revision: number }> => {
    let entry: KvEntry | null;
    try {
      entry = await kv.get(kvKey(conversationId));
    } catch (error) {
      throw fail(`cannot read the memory of ${where(conversationId)}`, error, kvBucketHint(bucket, error), true);
    }
    if (entry === null) return { memory: undefined, revision: 0 };
    if (entry.operation !== 'PUT') return { memory: undefined, revision: entry.revision };
    return { memory: parseMemory(entry, where(conversationId)), revision: entry.revision };
  };

  /** Writes `text` if the key is still at `revision`; resolves to the new revision, or `undefined` on a conflict. */
  const write = async (conversationId: string, text: string, revision: number): Promise<number | undefined> => {
    const key = kvKey(conversationId);
    try {
      return revision > 0 ? await kv.update(key, text, revision) : await kv.create(key, text);
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined;
      if (isValueTooLarge(error)) {
        throw fail(
          `memory of ${where(conversationId)} is larger than the bucket allows`,
          error,
          `the bucket was created with a smaller maxValueSize than this store's maxValueBytes (${maxValueBytes}); keep fewer turns or recreate the bucket`,
          false,
        );
      }
      throw fail(`cannot write the memory of ${where(conversationId)}`, error, kvBucketHint(bucket, error), true);
    }
  };

  const serialize = (conversationId: string, memory: MemoryRecord): string => {
    const text = serializeMemory(memory, `conversation ${conversationId}`);
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxValueBytes) {
      throw new RedflowError({
        code: ErrorCode.MEMORY_FAILED,
        message: `memory of ${where(conversationId)} is ${bytes} bytes of JSON, over the limit of ${maxValueBytes}`,
        hint: `keep less in memory (a smaller maxTurns) or raise maxValueBytes${maxPayload === undefined ? '' : ` (at most the server's max_payload, ${maxPayload})`}`,
      });
    }
    return text;
  };

  return {
    async load(conversationId) {
      checkConversationId(conversationId);
      const { memory, revision } = await read(conversationId);
      remember(conversationId, revision);
      return memory;
    },

    async save(conversationId, memory) {
      checkConversationId(conversationId);
      const text = serialize(conversationId, memory);
      const seen = revisions.get(conversationId) ?? 0;
      const written = await write(conversationId, text, seen);
      if (written !== undefined) {
        remember(conversationId, written);
        return;
      }
      // Someone else wrote the key since this store saw it. Only a repeat of this very save is fine.
      const current = await kv.get(kvKey(conversationId)).catch(() => null);
      if (current !== null && current.operation === 'PUT' && current.string() === text) {
        remember(conversationId, current.revision);
        return;
      }
      throw new RedflowError({
        code: ErrorCode.MEMORY_FAILED,
        message: `memory of ${where(conversationId)} was changed by another writer since this store ${seen > 0 ? `read revision ${seen}` : 'found it empty'}; nothing was saved`,
        hint: 'load the conversation again, re-apply the change and save (or use update(), which does this)',
        retryable: true,
      });
    },

    async update(conversationId, change) {
      checkConversationId(conversationId);
      for (let attempt = 1; attempt <= updateAttempts; attempt += 1) {
        const { memory, revision } = await read(conversationId);
        const text = serialize(conversationId, change(memory));
        const written = await write(conversationId, text, revision);
        if (written !== undefined) {
          remember(conversationId, written);
          return JSON.parse(text) as MemoryRecord;
        }
        if (attempt < updateAttempts) await sleep(Math.random() * Math.min(100, 5 * 2 ** attempt));
      }
      throw new RedflowError({
        code: ErrorCode.MEMORY_FAILED,
        message: `memory of ${where(conversationId)} kept changing under ${updateAttempts} update attempts; nothing was saved`,
        hint: 'too many writers on one conversation at once; try again, or raise updateAttempts',
        retryable: true,
      });
    },
  };
}

/** The KV key of a (valid) conversation id: `.` becomes `=`, so the key is one subject token. */
function kvKey(conversationId: string): string {
  return conversationId.replaceAll('.', '=');
}

function parseMemory(entry: KvEntry, where: string): MemoryRecord {
  const hint = 'fix or delete the key (nats kv del); the conversation then starts without memory';
  let parsed: unknown;
  try {
    parsed = JSON.parse(entry.string());
  } catch (error) {
    throw new RedflowError(
      {
        code: ErrorCode.MEMORY_FAILED,
        message: `memory of ${where} is corrupt: ${error instanceof Error ? error.message : String(error)}`,
        hint,
      },
      { cause: error },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new RedflowError({
      code: ErrorCode.MEMORY_FAILED,
      message: `memory of ${where} is corrupt: it does not hold a JSON object`,
      hint,
    });
  }
  return parsed as MemoryRecord;
}




/** This store's failure. */
function fail(message: string, error: unknown, hint: string, retryable: boolean): RedflowError {
  return kvFailure(ErrorCode.MEMORY_FAILED, message, error, hint, retryable);
}

function checkIntegerOption(name: string, value: number, min: number, max: number): void {
  if (Number.isInteger(value) && value >= min && value <= max) return;
  throw new RedflowError({
    code: ErrorCode.MEMORY_FAILED,
    message: `NATS KV memory store option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    hint: max === Number.MAX_SAFE_INTEGER ? undefined : `${name} is at most ${max}${name === 'maxValueBytes' ? " (the server's max_payload)" : ''}`,
  });
}
