import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { validators, describeSchemaErrors } from '../contracts/schemas.js';
import { ErrorCode, errorInfo } from '../errors.js';
import type { LogProblem } from './eventStore.js';
import type { AgentEvent } from './eventTypes.js';
import { createRunPathCheck, type RunPathCheck } from './runPath.js';

// A JSONL log's records: how an event is written as one (encodeJsonlRecord, which describes the
// format), and how they are read line by line, what reading a whole log (readJsonlLog) and
// following one (followJsonlLog) share.

/** Lines longer than this (in bytes, without the newline) are reported, never buffered. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const SPACE = 0x20;
const HEX8 = /^[0-9a-f]{8}$/;

/** A checksum as the 8 lowercase hex digits of a record. */
export function hex(checksum: number): string {
  return checksum.toString(16).padStart(8, '0');
}

/**
 * Encodes one event as a log line: `<checksum as 8 lowercase hex> <JSON>\n`. The checksum is the
 * CRC-32 of the JSON's UTF-8 bytes continued from the previous record's checksum (0 for the first
 * record): a chain, so a record changed, dropped, moved or spliced in from elsewhere breaks every
 * checksum after it, not only its own. (CRC-32 detects accidents and hand edits, not a forger who
 * recomputes the chain; it costs nothing on the hot path, unlike a cryptographic hash.)
 *
 * @param previous the checksum of the record before, as a number (0 for the first record).
 * @example
 * ```ts
 * encodeJsonlRecord(event); // '1c291ca3 {"id":"t1:1",...}\n'
 * ```
 */
export function encodeJsonlRecord(event: AgentEvent, previous = 0): string {
  return recordLine(JSON.stringify(event), previous).line;
}

/**
 * Encodes a whole run as the lines of its log, each checksum chained to the one before.
 *
 * @example
 * ```ts
 * await writeFile('run.jsonl', encodeJsonlLog(events));
 * ```
 */
export function encodeJsonlLog(events: readonly AgentEvent[]): string {
  let previous = 0;
  let text = '';
  for (const event of events) {
    const record = recordLine(JSON.stringify(event), previous);
    previous = record.checksum;
    text += record.line;
  }
  return text;
}

/**
 * An event's JSON as its record: the line (checksum, space, JSON, newline) and the checksum, the
 * CRC-32 of the JSON continued from `previous`, which the next record continues from.
 *
 * @example
 * ```ts
 * const { line, checksum } = recordLine(JSON.stringify(event), 0);
 * ```
 */
export function recordLine(json: string, previous: number): { readonly line: string; readonly checksum: number } {
  const checksum = crc32(json, previous);
  return { line: `${hex(checksum)} ${json}\n`, checksum };
}


/** One line of the file: its bytes (undefined when over the cap) and where it is. */
export interface RawLine {
  readonly number: number;
  readonly bytes: Buffer | undefined;
  readonly start: number;
  /** Offset just after the line's newline (or the end of the file when it has none). */
  readonly end: number;
  readonly terminated: boolean;
  /** True when nothing follows this line in the file. */
  readonly final: boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Where a reading of a file starts: a byte offset at the start of a line, and that line's number. */
export interface LinePosition {
  readonly offset: number;
  readonly line: number;
}

/**
 * Calls `onLine` for each line of the file's bytes from `from` (default: its start) up to `size`,
 * in chunks, so a file of any size (and lines of any length) is read in bounded memory. Stops when
 * `onLine` returns false.
 */
export async function forEachLine(handle: FileHandle, size: number, onLine: (line: RawLine) => boolean, from: LinePosition = { offset: 0, line: 1 }): Promise<void> {
  let position = from.offset;
  let number = from.line;
  let lineStart = from.offset;
  let parts: Buffer[] = [];
  let partsLength = 0;
  let oversized = false;

  const emit = (endOfLine: number, terminated: boolean): boolean => {
    const bytes = oversized ? undefined : Buffer.concat(parts, partsLength);
    const end = terminated ? endOfLine + 1 : endOfLine;
    const go = onLine({ number, bytes, start: lineStart, end, terminated, final: end >= size });
    number += 1;
    lineStart = end;
    parts = [];
    partsLength = 0;
    oversized = false;
    return go;
  };
  const add = (piece: Buffer): void => {
    if (oversized) return;
    if (partsLength + piece.length > MAX_RECORD_BYTES) {
      oversized = true;
      parts = [];
      partsLength = 0;
      return;
    }
    if (piece.length > 0) {
      parts.push(piece);
      partsLength += piece.length;
    }
  };

  while (position < size) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - position));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break; // the file shrank while we read it
    let from = 0;
    while (from < bytesRead) {
      const newline = chunk.indexOf(NEWLINE, from);
      if (newline === -1 || newline >= bytesRead) {
        add(chunk.subarray(from, bytesRead));
        break;
      }
      add(chunk.subarray(from, newline));
      if (!emit(position + newline, true)) return;
      from = newline + 1;
    }
    position += bytesRead;
  }
  if (position > lineStart) emit(position, false);
}

type Verdict =
  | { readonly ok: true; readonly event: AgentEvent; readonly checksum: number }
  /** `integrity`: checksum, framing or JSON failed (a torn write looks like this); else schema. */
  | { readonly ok: false; readonly integrity: boolean; readonly reason: string };

/** The schema check, without narrowing to the generated type (the event type is richer). */
export function matchesSchema(value: unknown): boolean {
  return validators.agentEvent(value);
}

function verify(bytes: Buffer | undefined, previous: number): Verdict {
  if (bytes === undefined) {
    return { ok: false, integrity: false, reason: `the record is longer than ${MAX_RECORD_BYTES} bytes` };
  }
  if (bytes.length < 10 || bytes[8] !== SPACE) {
    return { ok: false, integrity: true, reason: 'the line is not "<crc32> <json>"' };
  }
  const stored = bytes.toString('latin1', 0, 8);
  if (!HEX8.test(stored)) return { ok: false, integrity: true, reason: 'the checksum is not 8 lowercase hex digits' };
  const json = bytes.subarray(9);
  const checksum = crc32(json, previous);
  const actual = hex(checksum);
  if (actual !== stored) {
    return {
      ok: false,
      integrity: true,
      reason: `checksum mismatch (stored ${stored}, computed ${actual}): this record, or the chain before it, was changed`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(json));
  } catch (error) {
    return { ok: false, integrity: true, reason: `the JSON does not parse (${(error as Error).message})` };
  }
  if (!matchesSchema(value)) {
    return {
      ok: false,
      integrity: false,
      reason: `the event does not match agent-event.schema.json: ${describeSchemaErrors(validators.agentEvent.errors)}`,
    };
  }
  return { ok: true, event: value as AgentEvent, checksum };
}

function problem(code: ErrorCode, position: number, message: string, hint: string | undefined, path: string): LogProblem {
  return { ...errorInfo(code, message, { hint, path }), position };
}

const TORN_HINT = 'a write was cut short by a crash; repairTornTail (redflow resume) removes it';
const CORRUPT_HINT =
  'the log was modified or damaged; the events before this line are intact, the ones after it are not read';

/** What a reading of a log knows after the records judged so far: what the next one must be. */
export interface LogCursor {
  /** The run of the records so far (or the one expected), undefined before the first. */
  traceId: string | undefined;
  /** True when `traceId` was asked for, not taken from the first record (another hint on a mismatch). */
  readonly traceIdAsked: boolean;
  /** The seq of the last good record (0 before the first). */
  seq: number;
  /** The checksum of the last good record (0 before the first): where the chain goes on. */
  checksum: number;
  /** The path check, fed every good record. */
  readonly path: RunPathCheck;
}

/** A cursor at the start of a log; `traceId` when the log must hold that run. */
export function logCursor(traceId?: string): LogCursor {
  return { traceId, traceIdAsked: traceId !== undefined, seq: 0, checksum: 0, path: createRunPathCheck() };
}

/**
 * Judges one line of a log at `cursor`: its event, and the cursor moved past it, or the problem
 * that stops the reading there (see {@link readJsonlLog} for the codes). The one judgement of a
 * record, for reading a whole log and for following one.
 */
export function judgeLine(line: RawLine, cursor: LogCursor, path: string): { readonly event: AgentEvent } | { readonly problem: LogProblem } {
  const where = `${path}:${line.number}`;
  if (line.final && !line.terminated) {
    return { problem: problem(ErrorCode.LOG_RECORD_TORN, line.number, `${where}: the last record has no trailing newline`, TORN_HINT, path) };
  }
  const verdict = verify(line.bytes, cursor.checksum);
  if (!verdict.ok) {
    const torn = line.final && verdict.integrity;
    return {
      problem: torn
        ? problem(ErrorCode.LOG_RECORD_TORN, line.number, `${where}: the last record is incomplete: ${verdict.reason}`, TORN_HINT, path)
        : problem(ErrorCode.LOG_RECORD_CORRUPT, line.number, `${where}: corrupt record: ${verdict.reason}`, CORRUPT_HINT, path),
    };
  }
  const { event } = verdict;
  if (cursor.traceId !== undefined && event.traceId !== cursor.traceId) {
    return {
      problem: problem(
        ErrorCode.LOG_TRACE_MISMATCH,
        line.number,
        `${where}: the record belongs to run ${event.traceId}, not ${cursor.traceId}`,
        cursor.traceIdAsked ? 'this file holds another run; check the trace id or the path' : 'a JSONL log holds one run; records of another run were written into it',
        path,
      ),
    };
  }
  const expectedSeq = cursor.seq + 1;
  if (event.seq !== expectedSeq) {
    return {
      problem: problem(
        ErrorCode.LOG_SEQUENCE_GAP,
        line.number,
        `${where}: expected seq ${expectedSeq}, found seq ${event.seq}`,
        'records are missing or repeated; the events before this line are intact',
        path,
      ),
    };
  }
  const impossible = cursor.path.next(event);
  if (impossible !== undefined) {
    return {
      problem: problem(
        ErrorCode.LOG_PATH_INVALID,
        line.number,
        `${where}: not a step the run could take: ${impossible}`,
        'the records before this line are a run as it happened; this one and the ones after it were added or changed by something else',
        path,
      ),
    };
  }
  cursor.traceId = event.traceId;
  cursor.seq = event.seq;
  cursor.checksum = verdict.checksum;
  return { event };
}
