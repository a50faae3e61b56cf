import { open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { validators, describeSchemaErrors } from '../contracts/schemas.js';
import { ErrorCode, RedflowError } from '../errors.js';
import type { EventStore, LogProblem, ReadResult } from './eventStore.js';
import type { AgentEvent } from './eventTypes.js';
import { acquireLock, isErrno, notFound } from './fileLock.js';
import { followJsonlLog, jsonlAppended } from './jsonlFollow.js';
import { MAX_RECORD_BYTES, forEachLine, judgeLine, logCursor, matchesSchema, recordLine } from './jsonlRecords.js';
import { createRunPathCheck, type RunPathCheck } from './runPath.js';

export { MAX_RECORD_BYTES, encodeJsonlLog, encodeJsonlRecord } from './jsonlRecords.js';

/** When a JSONL store forces its records to disk with `fdatasync`. */
export type JsonlFsyncMode = 'always' | 'never' | { readonly intervalMs: number };

/** Options of {@link openJsonlEventStore}. */
export interface JsonlEventStoreOptions {
  /**
   * `'always'` (default): every append is synced before it resolves. `{ intervalMs }`: appends
   * resolve once written; the file is synced at most every `intervalMs` and on close. `'never'`:
   * synced only on close (a crash can lose the last appends, never corrupt earlier ones).
   */
  readonly fsync?: JsonlFsyncMode;
}

/** An {@link EventStore} writing one run to a JSONL file, as returned by {@link openJsonlEventStore}. */
export interface JsonlEventStore extends EventStore {
  /** The log file. */
  readonly path: string;
  /** The seq of the last event appended (or found when the file was opened); 0 when there is none. */
  lastSeq(): number;
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/** A full scan of a log file: what {@link readJsonlLog} reports, plus where the good records end. */
interface Scan extends ReadResult {
  readonly events: AgentEvent[];
  readonly problems: LogProblem[];
  /** Byte offset just after the last record that was folded. */
  readonly goodEnd: number;
  readonly size: number;
  readonly traceId: string | undefined;
  /** The checksum of the last good record (0 when there is none): where the chain goes on. */
  readonly checksum: number;
  /** The path check, fed every good record: appends go on from it. */
  readonly path: RunPathCheck;
}

async function scanLog(path: string, expectedTraceId?: string): Promise<Scan> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) throw notFound(path, error);
    throw error;
  }
  const events: AgentEvent[] = [];
  const problems: LogProblem[] = [];
  let goodEnd = 0;
  let size = 0;
  const cursor = logCursor(expectedTraceId);
  try {
    size = (await handle.stat()).size;
    await forEachLine(handle, size, (line) => {
      const judged = judgeLine(line, cursor, path);
      if ('problem' in judged) {
        problems.push(judged.problem);
        return false;
      }
      events.push(judged.event);
      goodEnd = line.end;
      return true;
    });
  } finally {
    await handle.close();
  }
  return { events, problems, goodEnd, size, traceId: cursor.traceId, checksum: cursor.checksum, path: cursor.path };
}

/**
 * Reads a JSONL event log without locking it (a writer may be appending). Bad content never
 * throws; it is reported in `problems` and folding stops there, so `events` is always a trusted
 * prefix of the run:
 * - `LOG_RECORD_TORN`: the last line has no newline, or its checksum or JSON does not verify
 *   (a crash mid-write; everything before it is good, {@link repairTornTail} removes it);
 * - `LOG_RECORD_CORRUPT`: a record before the last fails its checksum, its JSON, or the schema (or
 *   any record fails the schema or is longer than {@link MAX_RECORD_BYTES});
 * - `LOG_SEQUENCE_GAP`: a seq is missing or repeated (the first must be 1);
 * - `LOG_TRACE_MISMATCH`: a record belongs to another run than the first record;
 * - `LOG_PATH_INVALID`: every record is sound, but this one is not a step the run could take
 *   (see `createRunPathCheck`): an event after the ending, a tool outside `allowedTools`, …
 *
 * Throws `LOG_NOT_FOUND` when the file does not exist. An empty file reads as no events, no problems.
 *
 * @example
 * ```ts
 * const { events, problems } = await readJsonlLog('runs/abc.jsonl');
 * for (const p of problems) console.warn(p.code, p.message);
 * ```
 */
export async function readJsonlLog(path: string): Promise<ReadResult> {
  const { events, problems } = await scanLog(path);
  return { events, problems };
}

/**
 * Removes a torn last record (see {@link readJsonlLog}) by truncating the file just after the last
 * good record, so a resumed run can append again. Does nothing (returns 0) for a log without
 * problems. Refuses, with `LOG_RECORD_CORRUPT`, when the log has any other problem (corruption,
 * a sequence gap, another run's record): those need a human. Takes the writer lock while it
 * works, so it rejects with `LOG_CONCURRENT_WRITER` while a store has the file open.
 *
 * @example
 * ```ts
 * const { truncatedBytes } = await repairTornTail('runs/abc.jsonl');
 * const store = await openJsonlEventStore('runs/abc.jsonl');
 * ```
 */
export async function repairTornTail(path: string): Promise<{ truncatedBytes: number }> {
  const lock = await acquireLock(path);
  try {
    const scan = await scanLog(path);
    const [first] = scan.problems;
    if (first === undefined) return { truncatedBytes: 0 };
    if (first.code !== ErrorCode.LOG_RECORD_TORN) {
      throw new RedflowError({
        code: ErrorCode.LOG_RECORD_CORRUPT,
        message: `refusing to repair ${path}: ${first.code} at line ${first.position}: ${first.message}`,
        hint: 'only a torn last record is repaired automatically; inspect the file (redflow replay) and fix it by hand',
        path,
      });
    }
    await truncate(path, scan.goodEnd);
    return { truncatedBytes: scan.size - scan.goodEnd };
  } finally {
    await lock.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

function syncPolicy(mode: JsonlFsyncMode): 'always' | 'never' | number {
  if (mode === 'always' || mode === 'never') return mode;
  const { intervalMs } = mode;
  if (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new TypeError(`fsync.intervalMs must be a finite number >= 0, got ${String(intervalMs)}`);
  }
  return intervalMs;
}

async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

/**
 * Opens (creating it if needed) the JSONL event log of ONE run for appending. Each record is a
 * line `<chained crc32 hex> <JSON>\n` (see {@link encodeJsonlRecord}); appends are serialised and written in append mode, and resolve once
 * the record is as durable as `options.fsync` says (default `'always'`: fdatasync'd).
 *
 * Only one writer per file: the store holds `<path>.lock` (created exclusively, holding the pid)
 * until `close`. Opening rejects with `LOG_CONCURRENT_WRITER` while a live process holds it; a lock
 * left by a dead process is taken over. An existing file is read first and the store continues
 * its seq; a file with problems is refused with the problem's code (`LOG_RECORD_TORN`: call
 * {@link repairTornTail} first). `append` rejects with `LOG_CONCURRENT_WRITER` when `event.seq` is
 * not the next one, `LOG_TRACE_MISMATCH` for an event of another run, `LOG_RECORD_CORRUPT` for an
 * event that would not read back (schema, size), `LOG_PATH_INVALID` for an event the run could not
 * have recorded next, and `LOG_CLOSED` after `close`. If a write fails,
 * every later append rejects with the same error. `read(traceId)` reads the file as
 * {@link readJsonlLog} does, and reports records of another run as `LOG_TRACE_MISMATCH`.
 * `follow(traceId, afterSeq)` follows the file with `followJsonlLog` (this store's appends wake it
 * at once; a file that holds another run ends it with `LOG_TRACE_MISMATCH`).
 *
 * @example
 * ```ts
 * const store = await openJsonlEventStore('runs/abc.jsonl', { fsync: { intervalMs: 100 } });
 * try {
 *   await store.append(event);
 * } finally {
 *   await store.close();
 * }
 * ```
 */
export async function openJsonlEventStore(path: string, options: JsonlEventStoreOptions = {}): Promise<JsonlEventStore> {
  const policy = syncPolicy(options.fsync ?? 'always');
  const lock = await acquireLock(path);
  let handle: FileHandle;
  let traceId: string | undefined;
  let lastSeq = 0;
  let checksum = 0;
  let runPath = createRunPathCheck();
  try {
    const exists = await stat(path).then(
      () => true,
      (error: unknown) => {
        if (isErrno(error, 'ENOENT')) return false;
        throw error;
      },
    );
    if (exists) {
      const scan = await scanLog(path);
      const [first] = scan.problems;
      if (first !== undefined) {
        throw new RedflowError({
          code: first.code,
          message: `cannot append to ${path}: ${first.message}`,
          hint: first.hint ?? 'inspect the log before appending to it',
          path,
        });
      }
      traceId = scan.traceId;
      lastSeq = scan.events.length;
      checksum = scan.checksum;
      runPath = scan.path;
    }
    handle = await open(path, 'a');
  } catch (error) {
    await lock.release();
    if (isErrno(error, 'ENOENT')) throw notFound(path, error);
    throw error;
  }

  let chain: Promise<void> = Promise.resolve();
  let failure: unknown;
  let closed: Promise<void> | undefined;
  let dirty = false;
  let lastSync = Date.now();
  let timer: NodeJS.Timeout | undefined;

  const sync = async (): Promise<void> => {
    if (!dirty) return;
    dirty = false;
    lastSync = Date.now();
    await handle.datasync();
  };
  const enqueue = (work: () => Promise<void>): Promise<void> => {
    const run = chain.then(async () => {
      if (failure !== undefined) throw failure;
      try {
        await work();
      } catch (error) {
        failure = error;
        throw error;
      }
    });
    chain = run.catch(() => undefined);
    return run;
  };
  const scheduleSync = (intervalMs: number): void => {
    if (timer !== undefined) return;
    const delay = Math.max(0, lastSync + intervalMs - Date.now());
    timer = setTimeout(() => {
      timer = undefined;
      enqueue(sync).catch(() => undefined); // a failed sync fails the next append
    }, delay);
    timer.unref();
  };
  const refuse = (code: ErrorCode, message: string, hint: string): Promise<never> =>
    Promise.reject(new RedflowError({ code, message, hint, path }));

  return {
    path,
    lastSeq: () => lastSeq,

    append(event: AgentEvent): Promise<void> {
      if (closed !== undefined) {
        return refuse(ErrorCode.LOG_CLOSED, `${path} is closed`, 'open the log again to append');
      }
      if (event.seq !== lastSeq + 1) {
        return refuse(
          ErrorCode.LOG_CONCURRENT_WRITER,
          `${path}: expected seq ${lastSeq + 1}, got seq ${event.seq}`,
          'another writer appended to this run, or the event was appended twice',
        );
      }
      if (traceId !== undefined && event.traceId !== traceId) {
        return refuse(
          ErrorCode.LOG_TRACE_MISMATCH,
          `${path} holds run ${traceId}, not ${event.traceId}`,
          'a JSONL log holds one run; open one file per run',
        );
      }
      let json: string;
      try {
        json = JSON.stringify(event);
      } catch (error) {
        return refuse(ErrorCode.LOG_RECORD_CORRUPT, `event ${event.seq} cannot be serialised: ${(error as Error).message}`, 'events must be plain JSON data');
      }
      const { line, checksum: next } = recordLine(json, checksum);
      const bytes = Buffer.from(line, 'utf8');
      if (bytes.length - 1 > MAX_RECORD_BYTES) {
        return refuse(ErrorCode.LOG_RECORD_CORRUPT, `event ${event.seq} is ${bytes.length} bytes, over the ${MAX_RECORD_BYTES}-byte limit`, 'keep large outputs out of the event log');
      }
      // Validate what a reader will see, so nothing is written that would not read back.
      const readBack: unknown = JSON.parse(json);
      if (!matchesSchema(readBack)) {
        return refuse(
          ErrorCode.LOG_RECORD_CORRUPT,
          `event ${event.seq} does not match agent-event.schema.json: ${describeSchemaErrors(validators.agentEvent.errors)}`,
          'this is a bug in whatever built the event',
        );
      }
      // Nothing is written that a reader would refuse as a run: a bug upstream stops here.
      const impossible = runPath.next(readBack as AgentEvent);
      if (impossible !== undefined) {
        return refuse(ErrorCode.LOG_PATH_INVALID, `event ${event.seq} is not a step the run could take: ${impossible}`, 'this is a bug in whatever built the event');
      }
      traceId = event.traceId;
      lastSeq = event.seq;
      checksum = next;
      return enqueue(async () => {
        await writeAll(handle, bytes);
        jsonlAppended(path);
        dirty = true;
        if (policy === 'always') await sync();
        else if (policy === 'never') return;
        else if (Date.now() - lastSync >= policy) await sync();
        else scheduleSync(policy);
      });
    },

    follow(wanted, afterSeq, followOptions) {
      // The file, not this store: the follow goes on past close, and sees a later writer's appends.
      return followJsonlLog(path, afterSeq, { ...followOptions, traceId: wanted });
    },

    async read(wanted: string): Promise<ReadResult> {
      await chain; // appends already accepted are on disk before we read
      const { events, problems } = await scanLog(path, wanted);
      return { events, problems };
    },

    close(): Promise<void> {
      closed ??= (async () => {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        await chain;
        try {
          if (failure === undefined) await sync();
        } finally {
          try {
            await handle.close();
          } finally {
            await lock.release();
          }
        }
      })();
      return closed;
    },
  };
}
