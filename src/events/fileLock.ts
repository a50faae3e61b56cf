import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { ErrorCode, RedflowError } from '../errors.js';

// The lock file `<log>.lock` that keeps a second writer off a JSONL log (one writer per run:
// invariant 5 of docs/architecture.md).

/** The error for a log file that does not exist. */
export function notFound(path: string, cause: unknown): RedflowError {
  return new RedflowError(
    {
      code: ErrorCode.LOG_NOT_FOUND,
      message: `no event log at ${path}`,
      hint: 'check the path: a run writes its log where --log (or the runtime) pointed it',
      path,
    },
    { cause },
  );
}

/** True when `error` is a Node error with this errno code. */
export function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

/** A held lock on a log file. */
export interface Lock {
  release(): Promise<void>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return !isErrno(error, 'ESRCH');
  }
}

async function readLockFile(lockPath: string): Promise<string | undefined> {
  try {
    return await readFile(lockPath, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
}

function parsePid(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[1-9][0-9]{0,9}$/.test(trimmed)) return undefined;
  return Number(trimmed);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Takes `<path>.lock` (created with O_EXCL, holding our pid). A lock whose pid is not alive was left
 * by a crashed writer and is taken over; a live one is refused with `LOG_CONCURRENT_WRITER`.
 */
export async function acquireLock(path: string): Promise<Lock> {
  const lockPath = `${path}.lock`;
  const mine = `${process.pid}\n`;
  for (let attempt = 0; attempt < 10; attempt += 1) {
    try {
      const handle = await open(lockPath, 'wx');
      try {
        await handle.writeFile(mine);
      } finally {
        await handle.close();
      }
      return { release: () => releaseLock(lockPath, mine) };
    } catch (error) {
      if (isErrno(error, 'ENOENT')) throw notFound(path, error);
      if (!isErrno(error, 'EEXIST')) throw error;
    }

    // Someone holds it (or held it). The holder writes its pid right after creating the file,
    // so an empty lock is given a moment before it is judged stale.
    let held = await readLockFile(lockPath);
    for (let wait = 0; held !== undefined && parsePid(held) === undefined && wait < 5; wait += 1) {
      await sleep(20);
      held = await readLockFile(lockPath);
    }
    if (held === undefined) continue; // released meanwhile: try again
    const pid = parsePid(held);
    if (pid !== undefined && isAlive(pid)) {
      throw new RedflowError({
        code: ErrorCode.LOG_CONCURRENT_WRITER,
        message: `${path} is being written by process ${pid}${pid === process.pid ? ' (this process)' : ''}`,
        // Never "delete the lock": its process is alive, and a second writer would corrupt the run.
        // A lock outlives only a dead process, and the next writer takes that one over by itself.
        hint: `only one writer per log: wait for process ${pid} to finish (a lock whose process has died is taken over by the next writer)`,
        path,
      });
    }

    // Stale: move it aside atomically, so two processes taking it over cannot both succeed.
    const aside = `${lockPath}.stale-${process.pid}-${attempt}`;
    try {
      await rename(lockPath, aside);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) continue;
      throw error;
    }
    const moved = await readLockFile(aside);
    if (moved !== undefined && moved !== held) {
      // We moved a lock someone else took in between: put it back if the place is still free.
      await link(aside, lockPath).catch(() => undefined);
    }
    await unlink(aside).catch(() => undefined);
  }
  throw new RedflowError({
    code: ErrorCode.LOG_CONCURRENT_WRITER,
    message: `could not take the lock ${lockPath}: other processes keep taking it`,
    hint: 'only one writer per log; make sure a single process writes this run',
    path,
  });
}

/**
 * Removes `<path>.lock` when the process it names has died: taken over and released, as the next
 * writer would. A run that ended before its process was killed is never written again, so
 * nothing else would clear its lock. A lock whose process is alive stays, whoever asks.
 */
export async function clearDeadLock(path: string): Promise<void> {
  const held = await readLockFile(`${path}.lock`);
  if (held === undefined) return;
  const pid = parsePid(held);
  if (pid !== undefined && isAlive(pid)) return;
  try {
    await (await acquireLock(path)).release();
  } catch (error) {
    // Taken meanwhile by a live writer: it releases the lock itself.
    if (error instanceof RedflowError && error.code === ErrorCode.LOG_CONCURRENT_WRITER) return;
    throw error;
  }
}

async function releaseLock(lockPath: string, mine: string): Promise<void> {
  // Only remove the lock if it is still ours.
  if ((await readLockFile(lockPath)) === mine) await unlink(lockPath).catch(() => undefined);
}

/**
 * The pid of the live process that holds `<path>.lock`, or `undefined` when no live process holds
 * it (no lock, or one left by a process that has died). Reads only: the lock is left as it is.
 */
export async function liveLockHolder(path: string): Promise<number | undefined> {
  const held = await readLockFile(`${path}.lock`);
  const pid = held === undefined ? undefined : parsePid(held);
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}
