import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { FollowOptions } from './eventStore.js';
import { isTerminal, type AgentEvent } from './eventTypes.js';
import { isErrno } from './fileLock.js';
import { checkFollowCursor } from './follow.js';
import { forEachLine, judgeLine, logCursor, type LinePosition, type LogCursor } from './jsonlRecords.js';

/** Options of {@link followJsonlLog}. */
export interface JsonlFollowOptions extends FollowOptions {
  /** The run the file must hold; a record of another run ends the follow with `LOG_TRACE_MISMATCH`. */
  readonly traceId?: string;
  /**
   * How often the file is looked at when nothing has said it changed (default 1 s): the fallback
   * for a file system whose change events are late, lost or missing.
   */
  readonly pollMs?: number;
}

const DEFAULT_POLL_MS = 1000;

/**
 * Follows a JSONL event log (see `EventStore.follow`): the run's events with a seq above
 * `afterSeq`, read from the file and checked as `readJsonlLog` checks them, then each record as
 * it is appended, by a store in this process or in another one, until the run's ending. A file
 * that does not exist yet, or is empty, is waited for. A line still being written (no newline
 * yet) is waited for too: a follower cannot tell a write under way from a torn one, and a torn
 * last record is cut off by `repairTornTail` before anything is appended after it.
 *
 * The followers of one file in this process share one reader of it (a run followed by a hundred
 * clients is read and checked once, and they are handed the same event objects). What wakes the
 * reader: a store of this process, at once, after each write; `fs.watch` on the file's folder
 * (inotify on Linux), for writers in other processes; and a poll every `pollMs`, because
 * `fs.watch` is not reliable everywhere (network and container file systems may never report a
 * change, and a watch can fail for want of inotify watches): it makes the follow fast, it is never
 * what the follow depends on.
 *
 * @throws RedflowError `LOG_CURSOR_INVALID`; the code of a record `readJsonlLog` would report
 *   (`LOG_RECORD_CORRUPT`, `LOG_SEQUENCE_GAP`, `LOG_TRACE_MISMATCH`, `LOG_PATH_INVALID`,
 *   `LOG_RECORD_TORN` for a last line whose newline came but whose record does not verify).
 * @example
 * ```ts
 * for await (const event of followJsonlLog('.redflow/runs/abc.jsonl', 0)) console.log(event.seq, event.type);
 * ```
 */
export async function* followJsonlLog(file: string, afterSeq: number, options: JsonlFollowOptions = {}): AsyncGenerator<AgentEvent> {
  checkFollowCursor(options.traceId ?? file, afterSeq);
  const { signal, traceId } = options;
  const stopped = () => signal?.aborted === true;
  if (stopped()) return;
  const tail = LogTail.acquire(path.resolve(file), options.pollMs ?? DEFAULT_POLL_MS);
  try {
    // A log's seqs count from 1 without a gap: the event after `afterSeq` is at that index.
    let next = afterSeq;
    while (!stopped()) {
      const { events } = tail;
      const first = events[0];
      if (traceId !== undefined && first !== undefined && first.traceId !== traceId) {
        throw new RedflowError(
          errorInfo(ErrorCode.LOG_TRACE_MISMATCH, `${file}:1: the record belongs to run ${first.traceId}, not ${traceId}`, {
            hint: 'this file holds another run; check the trace id or the path',
            path: file,
          }),
        );
      }
      while (next < events.length) {
        yield events[next++] as AgentEvent;
        if (stopped()) return;
      }
      if (tail.ended) return;
      if (tail.failure !== undefined) throw tail.failure;
      await tail.change(signal);
    }
  } finally {
    tail.release();
  }
}

/** Tells the followers of `file` in this process that a record was written to it. */
export function jsonlAppended(file: string): void {
  if (LogTail.open.size > 0) LogTail.open.get(path.resolve(file))?.nudge();
}

/**
 * The one reader of a followed log file in this process: the good events read so far, read on as
 * the file grows, shared by every follower of the file until the last one leaves. Written by hand:
 * Node has no file tail, and each follower reading the file itself cost a run followed by a hundred
 * clients three times as long to reach them all.
 */
class LogTail {
  /** The tails of the files followed now, by absolute path. */
  static readonly open = new Map<string, LogTail>();

  static acquire(file: string, pollMs: number): LogTail {
    let tail = LogTail.open.get(file);
    if (tail === undefined) {
      tail = new LogTail(file);
      LogTail.open.set(file, tail);
    }
    tail.#followers += 1;
    tail.#pollEvery(pollMs);
    return tail;
  }

  /** The good events of the file so far, in order (never changed, only added to). */
  readonly events: AgentEvent[] = [];
  /** True once the run's ending has been read: nothing comes after it. */
  ended = false;
  /** Why the file is read no further (a damaged record, a read that failed). */
  failure: RedflowError | undefined;

  readonly #file: string;
  readonly #cursor: LogCursor = logCursor();
  #position: LinePosition = { offset: 0, line: 1 };
  #handle: FileHandle | undefined;
  readonly #watcher: FSWatcher | undefined;
  #poll: ReturnType<typeof setInterval> | undefined;
  #pollMs = Number.POSITIVE_INFINITY;
  #followers = 0;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  readonly #waiting = new Set<() => void>();

  private constructor(file: string) {
    this.#file = file;
    this.#watcher = watchFolderOf(file, () => this.nudge());
    this.nudge();
  }

  /** Something says the file may have grown: read it on (once more after the read under way, if any). */
  nudge(): void {
    if (this.ended || this.failure !== undefined) return;
    if (this.#reading !== undefined) {
      this.#readAgain = true;
      return;
    }
    this.#reading = (async () => {
      do {
        this.#readAgain = false;
        await this.#readOn();
      } while (this.#readAgain && !this.ended && this.failure === undefined);
    })().finally(() => {
      this.#reading = undefined;
      const waiting = [...this.#waiting];
      this.#waiting.clear();
      for (const wake of waiting) wake();
    });
  }

  /** Resolves once a read has found what the file holds now (maybe nothing new), or `signal` aborts. */
  change(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted === true) return resolve();
      const done = () => {
        this.#waiting.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.#waiting.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** One follower less; the last one closes the file and stops watching it. */
  release(): void {
    this.#followers -= 1;
    if (this.#followers > 0) return;
    LogTail.open.delete(this.#file);
    this.#watcher?.close();
    if (this.#poll !== undefined) clearInterval(this.#poll);
    // A read under way closes the file when it is done.
    void (this.#reading ?? Promise.resolve()).then(() => this.#handle?.close()).catch(() => undefined);
  }

  #pollEvery(ms: number): void {
    if (ms >= this.#pollMs) return;
    this.#pollMs = ms;
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#poll = setInterval(() => this.nudge(), ms);
    this.#poll.unref();
  }

  /** Reads the whole lines appended since the last read, and judges them. */
  async #readOn(): Promise<void> {
    try {
      this.#handle ??= await openIfThere(this.#file);
      if (this.#handle === undefined || this.#followers === 0) return;
      const size = (await this.#handle.stat()).size;
      const from = this.#position;
      if (size < from.offset) {
        this.failure = new RedflowError(
          errorInfo(ErrorCode.LOG_RECORD_CORRUPT, `${this.#file}: the log was cut to ${size} bytes while followed, below its ${from.offset} bytes of good records`, {
            hint: 'something other than a store rewrote the log; read it again with redflow replay',
            path: this.#file,
          }),
        );
        return;
      }
      if (size === from.offset) return;
      await forEachLine(
        this.#handle,
        size,
        (line) => {
          // A line without its newline is still being written: read again once it has it.
          if (!line.terminated) return false;
          const judged = judgeLine(line, this.#cursor, this.#file);
          if ('problem' in judged) {
            this.failure = new RedflowError(judged.problem);
            return false;
          }
          this.events.push(judged.event);
          this.#position = { offset: line.end, line: line.number + 1 };
          if (isTerminal(judged.event)) this.ended = true;
          return !this.ended;
        },
        from,
      );
    } catch (error) {
      this.failure = error instanceof RedflowError ? error : new RedflowError(errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `cannot read ${this.#file}: ${(error as Error).message}`, { path: this.#file }), { cause: error });
    }
  }
}

/** The file open for reading, or undefined while it does not exist. */
async function openIfThere(file: string): Promise<FileHandle | undefined> {
  try {
    return await open(file, 'r');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * Watches the folder (not the file: it may not exist yet, and a folder watch sees it created).
 * Undefined when the file system cannot watch it: the poll alone wakes the reader then.
 */
function watchFolderOf(file: string, onChange: () => void): FSWatcher | undefined {
  const name = path.basename(file);
  try {
    const watcher = watch(path.dirname(file), { persistent: false }, (_type, changed) => {
      if (changed === null || changed === name) onChange();
    });
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return undefined;
  }
}
