import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { FollowOptions, LogProblem } from './eventStore.js';
import { isTerminal, type AgentEvent } from './eventTypes.js';
import { isErrno } from './fileLock.js';
import { AppendBells, checkFollowCursor } from './follow.js';
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
 * Appends to a JSONL log by a store of this process, by absolute path: its followers in this
 * process wake at once, without waiting for the file system to tell them.
 */
const appendedHere = new AppendBells();

/** Tells the followers of `file` in this process that a record was written to it. */
export function jsonlAppended(file: string): void {
  if (!appendedHere.idle) appendedHere.ring(path.resolve(file));
}

/**
 * Follows a JSONL event log (see `EventStore.follow`): the run's events with a seq above
 * `afterSeq`, read from the file and checked as {@link readJsonlLog} checks them, then each record
 * as it is appended, by a store in this process or in another one, until the run's ending. A file
 * that does not exist yet, or is empty, is waited for. A line still being written (no newline
 * yet) is waited for too: a follower cannot tell a write under way from a torn one, and a torn
 * last record is cut off by `repairTornTail` before anything is appended after it.
 *
 * What wakes it: a store of this process, at once, after each write; `fs.watch` on the file's
 * folder (inotify on Linux), for writers in other processes; and a poll every `pollMs`, because
 * `fs.watch` is not reliable everywhere (network and container file systems may never report a
 * change, and a folder watch can fail for want of inotify watches): it is a hint that makes the
 * follow fast, never what it depends on.
 *
 * @throws RedflowError `LOG_CURSOR_INVALID`; the code of a record {@link readJsonlLog} would report
 *   (`LOG_RECORD_CORRUPT`, `LOG_SEQUENCE_GAP`, `LOG_TRACE_MISMATCH`, `LOG_PATH_INVALID`,
 *   `LOG_RECORD_TORN` for a last line whose newline came but whose record does not verify).
 * @example
 * ```ts
 * for await (const event of followJsonlLog('.redflow/runs/abc.jsonl', 0)) console.log(event.seq, event.type);
 * ```
 */
export async function* followJsonlLog(file: string, afterSeq: number, options: JsonlFollowOptions = {}): AsyncGenerator<AgentEvent> {
  checkFollowCursor(options.traceId ?? file, afterSeq);
  const { signal } = options;
  const stopped = () => signal?.aborted === true;
  const absolute = path.resolve(file);
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const cursor = logCursor(options.traceId);
  let position: LinePosition = { offset: 0, line: 1 };
  let handle: FileHandle | undefined;
  let watcher: FSWatcher | undefined;
  /** Set when something said the file may have changed since it was last read. */
  let changed = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    changed = true;
    wake?.();
  };
  /** Resolves at this process's next append to the file, a change event, the poll, or the abort. */
  const nextChange = () =>
    new Promise<void>((resolve) => {
      const inProcess = new AbortController();
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        wake = undefined;
        inProcess.abort();
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      wake = done;
      void appendedHere.wait(absolute, signal === undefined ? inProcess.signal : AbortSignal.any([inProcess.signal, signal])).then(done);
    });
  try {
    watcher = watchFolderOf(absolute, nudge);
    while (!stopped()) {
      changed = false;
      handle ??= await openIfThere(absolute);
      if (handle !== undefined) {
        const { events, ended, problem, next } = await readOn(handle, position, cursor, file);
        position = next;
        for (const event of events) {
          if (event.seq > afterSeq) yield event;
          if (stopped()) return;
        }
        if (problem !== undefined) throw new RedflowError(problem);
        if (ended) return;
      }
      // An append that came while the events were handed over is read at once.
      if (!changed) await nextChange();
    }
  } finally {
    watcher?.close();
    await handle?.close();
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
 * Undefined when the file system cannot watch it: the poll alone wakes the follower then.
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

/** The good records from `from` to the file's end (whole lines only), whether the run has ended, and where to go on. */
async function readOn(
  handle: FileHandle,
  from: LinePosition,
  cursor: LogCursor,
  file: string,
): Promise<{ events: AgentEvent[]; ended: boolean; problem: LogProblem | undefined; next: LinePosition }> {
  const size = (await handle.stat()).size;
  const events: AgentEvent[] = [];
  let problem: LogProblem | undefined;
  let next = from;
  let ended = false;
  if (size < from.offset) {
    problem = { ...errorInfo(ErrorCode.LOG_RECORD_CORRUPT, `${file}: the log was cut to ${size} bytes while followed, below its ${from.offset} bytes of good records`, { hint: 'something other than a store rewrote the log; read it again with redflow replay', path: file }), position: from.line };
    return { events, ended, problem, next };
  }
  if (size === from.offset) return { events, ended, problem, next };
  await forEachLine(
    handle,
    size,
    (line) => {
      // A line without its newline is still being written: read again once it has it.
      if (!line.terminated) return false;
      const judged = judgeLine(line, cursor, file);
      if ('problem' in judged) {
        problem = judged.problem;
        return false;
      }
      events.push(judged.event);
      next = { offset: line.end, line: line.number + 1 };
      if (isTerminal(judged.event)) ended = true;
      return !ended;
    },
    from,
  );
  return { events, ended, problem, next };
}
