import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { isErrno } from '../events/fileLock.js';
import { terminalEventTypes, type AgentEventType } from '../events/eventTypes.js';

/** How much of a log's end is read to see whether the run ended: more than any ending record. */
const TAIL_BYTES = 64 * 1024;

/**
 * The run logs in `dir` whose last record is not a run's ending (`run.completed`, `run.failed`):
 * runs that were under way when their process stopped, oldest name first. Only each file's end is
 * read, so a folder of many finished runs costs little; a log whose end cannot be read is listed,
 * for the full read to report what is wrong with it.
 *
 * @example
 * ```ts
 * for (const log of await unfinishedLogs('/home/me/.node-red/redflow/runs/a1b2')) await resume(log);
 * ```
 */
export async function unfinishedLogs(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    throw error;
  }
  const unfinished: string[] = [];
  for (const name of names.filter((candidate) => candidate.endsWith('.jsonl')).sort()) {
    const file = path.join(dir, name);
    if (!(await endsWithEnding(file))) unfinished.push(file);
  }
  return unfinished;
}

async function endsWithEnding(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return false;
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const lines = buffer.toString('utf8').split('\n');
    // A complete log ends with a newline: the last element is then empty.
    if (lines.pop() !== '') return false;
    const last = lines.pop();
    if (last === undefined) return false;
    const json = last.slice(last.indexOf(' ') + 1);
    const type = (JSON.parse(json) as { type?: unknown }).type;
    return terminalEventTypes.has(type as AgentEventType);
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
