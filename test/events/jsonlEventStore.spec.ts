import { spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, open, readFile, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { clearDeadLock } from '../../src/events/fileLock.js';
import {
  MAX_RECORD_BYTES,
  encodeJsonlLog,
  encodeJsonlRecord,
  openJsonlEventStore,
  readJsonlLog,
  repairTornTail,
} from '../../src/events/jsonlEventStore.js';

const time = '2025-01-01T00:00:00.000Z';

function started(traceId = 'run-1', input: unknown = 'hello'): AgentEvent {
  return {
    id: `${traceId}:1`,
    traceId,
    seq: 1,
    type: 'run.started',
    time,
    iteration: 0,
    data: {
      input,
      startedAt: time,
      agent: { strategy: 'react', maxIterations: 20, allowedTools: ['t'] },
      tools: [],
    },
  };
}

/**
 * The event at `seq` (≥ 2) of a run that calls tool `t` every iteration: model.requested,
 * model.answered, tool.requested, tool.completed, and again. `text` goes into the event's data.
 */
function requested(seq: number, traceId = 'run-1', text = `prompt ${seq}`): AgentEvent {
  const step = (seq - 2) % 4;
  const iteration = Math.floor((seq - 2) / 4) + 1;
  const base = { id: `${traceId}:${seq}`, traceId, seq, time, iteration };
  const idempotencyKey = `${traceId}:${iteration}`;
  if (step === 0) return { ...base, type: 'model.requested', data: { prompt: text } };
  if (step === 1) return { ...base, type: 'model.answered', data: { text, durationMs: 1 } };
  if (step === 2) return { ...base, type: 'tool.requested', data: { tool: 't', input: { text }, confidence: 0.5, idempotencyKey } };
  return { ...base, type: 'tool.completed', data: { tool: 't', idempotencyKey, ok: true, output: text, durationMs: 1 } };
}

/** A run of `count` schema-valid events that the statechart could have recorded. */
function run(count: number, traceId = 'run-1'): AgentEvent[] {
  const events: AgentEvent[] = [started(traceId)];
  for (let seq = 2; seq <= count; seq += 1) events.push(requested(seq, traceId));
  return events;
}

/** Log lines with correct chained checksums, from events or from any text. */
function lines(...records: (AgentEvent | string)[]): string {
  let previous = 0;
  let text = '';
  for (const record of records) {
    const json = typeof record === 'string' ? record : JSON.stringify(record);
    previous = crc32(json, previous);
    text += `${previous.toString(16).padStart(8, '0')} ${json}\n`;
  }
  return text;
}

async function rejection(promise: Promise<unknown>): Promise<RedflowError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'redflow-jsonl-'));
  file = join(dir, 'run.jsonl');
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

async function writeRun(events: readonly AgentEvent[], path = file): Promise<void> {
  const store = await openJsonlEventStore(path, { fsync: 'never' });
  try {
    for (const event of events) await store.append(event);
  } finally {
    await store.close();
  }
}

describe('openJsonlEventStore', () => {
  it('should write events that read back equal, one checksummed line each', async () => {
    const events = [started('run-1', { text: 'héllo ✓ 😀', n: [1, 2, 3] }), requested(2), requested(3, 'run-1', 'a\nb "q"')];
    await writeRun(events);

    const result = await readJsonlLog(file);
    expect(result.problems).toEqual([]);
    expect(result.events).toEqual(events);

    const text = await readFile(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const written = text.slice(0, -1).split('\n');
    expect(written).toHaveLength(3);
    let previous = 0;
    written.forEach((l, i) => {
      const json = l.slice(9);
      previous = crc32(json, previous);
      expect(l.slice(0, 9)).toBe(`${previous.toString(16).padStart(8, '0')} `);
      expect(JSON.parse(json)).toEqual(events[i]);
    });
    expect(text).toBe(encodeJsonlLog(events));
    expect(text).toBe(lines(...events));
  });

  it('should read its own file through read(traceId)', async () => {
    const store = await openJsonlEventStore(file);
    const events = run(3);
    for (const event of events) await store.append(event);
    const result = await store.read('run-1');
    expect(result).toEqual({ events, problems: [] });
    await store.close();
  });

  it('should report the records as LOG_TRACE_MISMATCH when read(traceId) asks for another run', async () => {
    const store = await openJsonlEventStore(file);
    for (const event of run(2)) await store.append(event);
    const result = await store.read('other-run');
    expect(result.events).toEqual([]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_TRACE_MISMATCH, position: 1 });
    await store.close();
  });

  it('should reject an event whose seq is not the next one with LOG_CONCURRENT_WRITER', async () => {
    const store = await openJsonlEventStore(file);
    const first = await rejection(store.append(requested(2)));
    expect(first.code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    expect(first.message).toContain('expected seq 1');
    expect(first.message).toContain('got seq 2');
    await store.append(started());
    await store.append(requested(2));
    const repeated = await rejection(store.append(requested(2)));
    expect(repeated.code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    expect(repeated.message).toContain('expected seq 3');
    expect((await rejection(store.append(requested(5)))).code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    await store.close();
    expect((await readJsonlLog(file)).events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('should reject an event of another run with LOG_TRACE_MISMATCH', async () => {
    const store = await openJsonlEventStore(file);
    await store.append(started('run-1'));
    const error = await rejection(store.append(requested(2, 'run-2')));
    expect(error.code).toBe(ErrorCode.LOG_TRACE_MISMATCH);
    await store.close();
  });

  it('should reject an event that fails the schema and write nothing', async () => {
    const store = await openJsonlEventStore(file);
    const bad = { ...requested(1), data: { nope: true } } as unknown as AgentEvent;
    const error = await rejection(store.append(bad));
    expect(error.code).toBe(ErrorCode.LOG_RECORD_CORRUPT);
    await store.append(started());
    await store.close();
    expect((await readJsonlLog(file)).events).toHaveLength(1);
  });

  it('should keep concurrent appends in call order', async () => {
    const store = await openJsonlEventStore(file, { fsync: 'always' });
    const events = run(25);
    await Promise.all(events.map((event) => store.append(event)));
    await store.close();
    expect((await readJsonlLog(file)).events).toEqual(events);
  });

  it('should continue the seq of an existing file when reopened', async () => {
    await writeRun(run(2));
    const store = await openJsonlEventStore(file);
    expect(store.lastSeq()).toBe(2);
    expect((await rejection(store.append(started()))).code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    await store.append(requested(3));
    expect((await rejection(store.append(requested(3, 'run-2')))).code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    expect((await rejection(store.append(requested(4, 'run-2')))).code).toBe(ErrorCode.LOG_TRACE_MISMATCH);
    await store.close();
    expect((await readJsonlLog(file)).events).toEqual(run(3));
  });

  it('should reject appends after close with LOG_CLOSED and allow closing twice', async () => {
    const store = await openJsonlEventStore(file);
    await store.append(started());
    await store.close();
    await store.close();
    expect((await rejection(store.append(requested(2)))).code).toBe(ErrorCode.LOG_CLOSED);
  });

  it('should refuse to open a log with a torn tail until it is repaired', async () => {
    await writeRun(run(2));
    await appendFile(file, encodeJsonlRecord(requested(3)).slice(0, 20));
    const error = await rejection(openJsonlEventStore(file));
    expect(error.code).toBe(ErrorCode.LOG_RECORD_TORN);
    expect(await exists(`${file}.lock`)).toBe(false);
    await repairTornTail(file);
    const store = await openJsonlEventStore(file);
    await store.append(requested(3));
    await store.close();
    expect((await readJsonlLog(file)).events).toEqual(run(3));
  });

  it('should refuse to open a corrupt log', async () => {
    await writeFile(file, lines(started(), '{"not": "an event"}', requested(2)));
    expect((await rejection(openJsonlEventStore(file))).code).toBe(ErrorCode.LOG_RECORD_CORRUPT);
  });

  it('should report LOG_NOT_FOUND when the directory does not exist', async () => {
    const error = await rejection(openJsonlEventStore(join(dir, 'missing', 'run.jsonl')));
    expect(error.code).toBe(ErrorCode.LOG_NOT_FOUND);
  });

  describe('lock', () => {
    it('should refuse a second writer while the first is open, naming its pid', async () => {
      const first = await openJsonlEventStore(file);
      expect((await readFile(`${file}.lock`, 'utf8')).trim()).toBe(String(process.pid));
      const error = await rejection(openJsonlEventStore(file));
      expect(error.code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
      expect(error.message).toContain(String(process.pid));
      expect(error.hint).toBeTruthy();
      // Its process is alive: deleting the lock would let a second writer into the log.
      expect(error.hint).not.toMatch(/delete|remove/i);
      await first.append(started());
      await first.close();
      expect(await exists(`${file}.lock`)).toBe(false);
      const second = await openJsonlEventStore(file);
      await second.append(requested(2));
      await second.close();
      expect((await readJsonlLog(file)).events).toEqual(run(2));
    });

    it('should take over a stale lock left by a dead process', async () => {
      const dead = spawnSync(process.execPath, ['-e', '']);
      expect(dead.status).toBe(0);
      expect(dead.pid).toBeGreaterThan(0);
      await writeFile(`${file}.lock`, `${dead.pid}\n`);
      const store = await openJsonlEventStore(file);
      expect((await readFile(`${file}.lock`, 'utf8')).trim()).toBe(String(process.pid));
      await store.append(started());
      await store.close();
      expect(await exists(`${file}.lock`)).toBe(false);
    });

    it('should clear a lock left by a dead process, and never one whose process is alive', async () => {
      await writeFile(file, lines(started()));
      const dead = spawnSync(process.execPath, ['-e', '']);
      await writeFile(`${file}.lock`, `${dead.pid}\n`);
      await clearDeadLock(file);
      expect(await exists(`${file}.lock`)).toBe(false);
      const live = await openJsonlEventStore(file);
      await clearDeadLock(file);
      expect((await readFile(`${file}.lock`, 'utf8')).trim()).toBe(String(process.pid));
      await live.close();
    });

    it('should take over a lock file with no pid in it', async () => {
      await writeFile(`${file}.lock`, '');
      const store = await openJsonlEventStore(file);
      // The new owner is this process, and it writes.
      expect((await readFile(`${file}.lock`, 'utf8')).trim()).toBe(String(process.pid));
      await store.append(started());
      await store.close();
      expect(await exists(`${file}.lock`)).toBe(false);
    });

    it('should refuse repairTornTail while a writer has the log open', async () => {
      const store = await openJsonlEventStore(file);
      expect((await rejection(repairTornTail(file))).code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
      await store.close();
    });
  });

  describe('fsync', () => {
    async function datasyncSpy() {
      const probe: FileHandle = await open(join(dir, 'probe'), 'w');
      const proto = Object.getPrototypeOf(probe) as FileHandle;
      await probe.close();
      return vi.spyOn(proto, 'datasync');
    }

    const modes = [
      { mode: 'always' as const, syncs: 3 },
      { mode: 'never' as const, syncs: 1 },
      { mode: { intervalMs: 60_000 }, syncs: 1 },
    ];
    for (const { mode, syncs } of modes) {
      it(`should persist every event after close with fsync ${JSON.stringify(mode)}`, async () => {
        const spy = await datasyncSpy();
        const store = await openJsonlEventStore(file, { fsync: mode });
        const events = run(3);
        for (const event of events) await store.append(event);
        await store.close();
        expect(spy).toHaveBeenCalledTimes(syncs);
        expect(await readJsonlLog(file)).toEqual({ events, problems: [] });
      });
    }

    it('should sync on the interval timer without waiting for close', async () => {
      const spy = await datasyncSpy();
      const store = await openJsonlEventStore(file, { fsync: { intervalMs: 20 } });
      await store.append(started());
      // The timer's sync comes, whenever the loaded machine runs it; then, nothing new, no other.
      await expect.poll(() => spy.mock.calls.length, { timeout: 5000, interval: 10 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(spy).toHaveBeenCalledTimes(1);
      await store.close();
      expect(spy).toHaveBeenCalledTimes(1); // nothing new to sync
    });
  });
});

describe('readJsonlLog', () => {
  it('should throw LOG_NOT_FOUND with a hint for a missing file', async () => {
    const error = await rejection(readJsonlLog(join(dir, 'nope.jsonl')));
    expect(error.code).toBe(ErrorCode.LOG_NOT_FOUND);
    expect(error.hint).toBeTruthy();
  });

  it('should read an empty file as no events and no problems', async () => {
    await writeFile(file, '');
    expect(await readJsonlLog(file)).toEqual({ events: [], problems: [] });
  });

  it('should report a final line without a newline as torn and not fold it', async () => {
    const events = run(3);
    await writeFile(file, lines(...events).slice(0, -1));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual(events.slice(0, 2));
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_TORN, position: 3 });
  });

  it('should report a final line whose checksum fails as torn', async () => {
    await writeFile(file, lines(started(), requested(2)).replace('prompt 2', 'prompt X'));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([started()]);
    expect(result.problems.map((p) => [p.code, p.position])).toEqual([[ErrorCode.LOG_RECORD_TORN, 2]]);
  });

  it('should detect a flipped byte in the middle as corrupt and not fold later records', async () => {
    const events = run(4);
    await writeRun(events);
    const bytes = await readFile(file);
    const secondLineStart = bytes.indexOf(0x0a) + 1;
    const target = secondLineStart + 30;
    bytes[target] = bytes[target]! ^ 0x01;
    await writeFile(file, bytes);

    const result = await readJsonlLog(file);
    expect(result.events).toEqual(events.slice(0, 1));
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
    expect(result.problems[0]!.message).toContain('checksum');
  });

  it('should report invalid JSON with a matching checksum as corrupt', async () => {
    await writeFile(file, lines(started(), '{"id": "run-1:2", oops', requested(3)));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([started()]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
    expect(result.problems[0]!.message).toContain('JSON');
  });

  it('should report a record that fails the schema as corrupt, even as the last line', async () => {
    const bad = { ...requested(2), data: { prompt: 42 } };
    await writeFile(file, lines(started(), JSON.stringify(bad)));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([started()]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
    expect(result.problems[0]!.message).toContain('schema');
  });

  it('should report a blank line in the middle as corrupt', async () => {
    await writeFile(file, `${lines(started())}\n${lines(started(), requested(2)).split('\n')[1]}\n`);
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([started()]);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
  });

  it('should report a sequence gap and stop there', async () => {
    await writeFile(file, lines(started(), requested(2), requested(4), requested(5)));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual(run(2));
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_SEQUENCE_GAP, position: 3 });
    expect(result.problems[0]!.message).toContain('expected seq 3');
  });

  it('should report a repeated seq and a log not starting at seq 1 as gaps', async () => {
    await writeFile(file, lines(started(), requested(2), requested(2)));
    expect((await readJsonlLog(file)).problems.map((p) => [p.code, p.position])).toEqual([[ErrorCode.LOG_SEQUENCE_GAP, 3]]);
    await writeFile(file, lines(requested(2), requested(3)));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([]);
    expect(result.problems.map((p) => [p.code, p.position])).toEqual([[ErrorCode.LOG_SEQUENCE_GAP, 1]]);
  });

  it('should report a record of another run as LOG_TRACE_MISMATCH', async () => {
    await writeFile(file, lines(started('run-1'), requested(2, 'run-2')));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([started('run-1')]);
    expect(result.problems.map((p) => [p.code, p.position])).toEqual([[ErrorCode.LOG_TRACE_MISMATCH, 2]]);
  });

  it('should report an oversized line as corrupt without crashing', async () => {
    const huge = Buffer.alloc(MAX_RECORD_BYTES + 100, 0x61);
    await writeFile(file, Buffer.concat([Buffer.from(encodeJsonlRecord(started())), huge, Buffer.from('\n'), Buffer.from(lines(started(), requested(2)).split('\n')[1] + '\n')]));
    const result = await readJsonlLog(file);
    expect(result.events).toEqual([started()]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
  });

  it('should read records spanning many read chunks', async () => {
    const events = [started('run-1', 'x'.repeat(300_000)), requested(2, 'run-1', 'y'.repeat(150_000)), requested(3)];
    await writeRun(events);
    expect(await readJsonlLog(file)).toEqual({ events, problems: [] });
  });
});

describe('repairTornTail', () => {
  it('should truncate a torn tail to the end of the last good record', async () => {
    await writeRun(run(2));
    const goodSize = (await stat(file)).size;
    const partial = encodeJsonlRecord(requested(3)).slice(0, 25);
    await appendFile(file, partial);

    expect((await readJsonlLog(file)).problems[0]?.code).toBe(ErrorCode.LOG_RECORD_TORN);
    expect(await repairTornTail(file)).toEqual({ truncatedBytes: Buffer.byteLength(partial) });
    expect((await stat(file)).size).toBe(goodSize);
    expect(await readJsonlLog(file)).toEqual({ events: run(2), problems: [] });
    expect(await exists(`${file}.lock`)).toBe(false);
  });

  it('should do nothing to a clean log', async () => {
    await writeRun(run(2));
    const before = await readFile(file);
    expect(await repairTornTail(file)).toEqual({ truncatedBytes: 0 });
    expect(await readFile(file)).toEqual(before);
  });

  it('should refuse with LOG_RECORD_CORRUPT when a record in the middle is corrupt, and leave the file alone', async () => {
    await writeRun(run(3));
    const bytes = await readFile(file);
    bytes[bytes.indexOf(0x0a) + 20] = 0x7a;
    await writeFile(file, Buffer.concat([bytes, Buffer.from('abc')])); // and a torn tail after it
    const before = await readFile(file);

    const error = await rejection(repairTornTail(file));
    expect(error.code).toBe(ErrorCode.LOG_RECORD_CORRUPT);
    expect(await readFile(file)).toEqual(before);
  });

  it('should refuse with LOG_RECORD_CORRUPT when the log has a sequence gap', async () => {
    await writeFile(file, lines(started(), requested(3)) + 'torn');
    expect((await rejection(repairTornTail(file))).code).toBe(ErrorCode.LOG_RECORD_CORRUPT);
  });

  it('should throw LOG_NOT_FOUND for a missing file', async () => {
    expect((await rejection(repairTornTail(join(dir, 'nope.jsonl')))).code).toBe(ErrorCode.LOG_NOT_FOUND);
  });
});

describe('readJsonlLog (properties)', () => {
  const events = [
    started('run-1', { q: 'Où est ma commande A-1001 ? 📦', n: 1 }),
    requested(2),
    requested(3, 'run-1', 'line\nbreak and "quotes" \u2028'),
    requested(4),
    requested(5, 'run-1', 'ü'.repeat(40)),
    requested(6),
  ];
  const original = Buffer.from(encodeJsonlLog(events), 'utf8');
  const boundaries = new Set<number>([0]);
  for (let i = 0; i < original.length; i += 1) if (original[i] === 0x0a) boundaries.add(i + 1);

  type Corruption =
    | { kind: 'xor'; at: number; mask: number }
    | { kind: 'set'; at: number; byte: number }
    | { kind: 'delete'; at: number; count: number }
    | { kind: 'insert'; at: number; bytes: Uint8Array }
    | { kind: 'truncate'; at: number };

  const position = fc.nat({ max: original.length });
  const corruption: fc.Arbitrary<Corruption> = fc.oneof(
    fc.record({ kind: fc.constant('xor' as const), at: position, mask: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant('set' as const), at: position, byte: fc.constantFrom(0x0a, 0x20, 0x7b, 0x22, 0x30, 0x00, 0xff) }),
    fc.record({ kind: fc.constant('delete' as const), at: position, count: fc.integer({ min: 1, max: 200 }) }),
    fc.record({ kind: fc.constant('insert' as const), at: position, bytes: fc.uint8Array({ minLength: 1, maxLength: 20 }) }),
    fc.record({ kind: fc.constant('truncate' as const), at: position }),
  );

  function apply(bytes: Buffer, c: Corruption): Buffer {
    const at = Math.min(c.at, bytes.length);
    switch (c.kind) {
      case 'xor': {
        if (at >= bytes.length) return bytes;
        const copy = Buffer.from(bytes);
        copy[at] = copy[at]! ^ c.mask;
        return copy;
      }
      case 'set': {
        if (at >= bytes.length) return bytes;
        const copy = Buffer.from(bytes);
        copy[at] = c.byte;
        return copy;
      }
      case 'delete':
        return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + c.count)]);
      case 'insert':
        return Buffer.concat([bytes.subarray(0, at), Buffer.from(c.bytes), bytes.subarray(at)]);
      case 'truncate':
        return bytes.subarray(0, at);
    }
  }

  it('should never throw and only return a prefix of the written events for corrupted files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(corruption, { minLength: 1, maxLength: 4 }), async (corruptions) => {
        const damaged = corruptions.reduce(apply, original);
        await writeFile(file, damaged);
        const result = await readJsonlLog(file);
        expect(result.events).toEqual(events.slice(0, result.events.length));
        expect(result.problems.length).toBeLessThanOrEqual(1);
        // Something changed: either a problem is reported, or the change only cut whole records off.
        const unreported = !damaged.equals(original) && result.problems.length === 0;
        expect(!unreported || original.subarray(0, damaged.length).equals(damaged), 'a change reported as no problem is a cut').toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('should read any truncation as the whole records it contains, and repair it back to them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: original.length }), async (length) => {
        await writeFile(file, original.subarray(0, length));
        const whole = [...boundaries].filter((b) => b <= length).length - 1;
        const result = await readJsonlLog(file);
        expect(result.events).toEqual(events.slice(0, whole));
        const atBoundary = boundaries.has(length);
        expect(result.problems.map((p) => p.code)).toEqual(atBoundary ? [] : [ErrorCode.LOG_RECORD_TORN]);

        const { truncatedBytes } = await repairTornTail(file);
        expect(truncatedBytes).toBe(length - Math.max(...[...boundaries].filter((b) => b <= length)));
        expect(await readJsonlLog(file)).toEqual({ events: events.slice(0, whole), problems: [] });
      }),
      { numRuns: 200 },
    );
  });
});
