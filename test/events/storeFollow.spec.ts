import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { encodeJsonlLog, openJsonlEventStore } from '../../src/events/jsonlEventStore.js';
import { followJsonlLog } from '../../src/events/jsonlFollow.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { asRun, describeFollowContract, drain, recordedRun, within } from './followContract.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-follow-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeFollowContract('memory store', async () => {
  const store = createMemoryEventStore();
  return { store, append: (event) => store.append(event), close: () => store.close() };
});

describeFollowContract('JSONL store', async (traceId) => {
  const store = await openJsonlEventStore(path.join(dir, `${traceId}.jsonl`), { fsync: 'never' });
  return { store, append: (event) => store.append(event), close: () => store.close() };
});

/** The error a follow ends with. */
async function failure(events: AsyncIterable<AgentEvent>): Promise<RedflowError> {
  const error = await drain(events).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

describe('following a JSONL log', () => {
  let template: readonly AgentEvent[];

  beforeAll(async () => {
    template = await recordedRun();
  });

  it('should see the records another process appends, line by line, and end after the ending', async () => {
    const traceId = 'other-process';
    const file = path.join(dir, `${traceId}.jsonl`);
    const lines = encodeJsonlLog(asRun(template, traceId)).split(/(?<=\n)/);
    // The writer is another process: nothing in this one rings the follower, only the file changes.
    const writer = `
      const { appendFileSync } = require('node:fs');
      const lines = ${JSON.stringify(lines)};
      let i = 0;
      const next = () => { if (i < lines.length) { appendFileSync(${JSON.stringify(file)}, lines[i++]); setTimeout(next, 15); } };
      next();`;
    const following = drain(followJsonlLog(file, 0, { traceId }));
    const child = spawn(process.execPath, ['-e', writer], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    expect(await within(following, 10_000)).toEqual(asRun(template, traceId));
    await exited;
  });

  it('should wait for a record whose line is still being written, and take it once its newline comes', async () => {
    const traceId = 'half-written';
    const file = path.join(dir, `${traceId}.jsonl`);
    const text = encodeJsonlLog(asRun(template, traceId));
    const cut = text.indexOf('\n', text.indexOf('\n') + 1) + 20; // two records and the start of a third
    await writeFile(file, text.slice(0, cut));
    const got: AgentEvent[] = [];
    const following = (async () => {
      for await (const event of followJsonlLog(file, 0, { traceId, pollMs: 50 })) got.push(event);
    })();
    await expect.poll(() => got.length, { timeout: 5000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(got.length).toBe(2);
    await appendFile(file, text.slice(cut));
    expect(await within(following, 5000)).toBeUndefined();
    expect(got).toEqual(asRun(template, traceId));
  });

  it('should end with LOG_RECORD_CORRUPT at a record whose checksum does not verify, after the good ones', async () => {
    const traceId = 'corrupt';
    const file = path.join(dir, `${traceId}.jsonl`);
    const lines = encodeJsonlLog(asRun(template, traceId)).split(/(?<=\n)/);
    const damaged = lines.map((line, i) => (i === 3 ? line.replace('"seq":4', '"seq":4 ') : line));
    await writeFile(file, damaged.join(''));
    const got: AgentEvent[] = [];
    const error = await failure(
      (async function* () {
        for await (const event of followJsonlLog(file, 0, { traceId })) {
          got.push(event);
          yield event;
        }
      })(),
    );
    expect(error.code).toBe(ErrorCode.LOG_RECORD_CORRUPT);
    expect(error.message).toContain(`${file}:4`);
    expect(got.map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it("should end with LOG_TRACE_MISMATCH when the file holds another run, through the store's follow too", async () => {
    const file = path.join(dir, 'mismatch.jsonl');
    const store = await openJsonlEventStore(file, { fsync: 'never' });
    try {
      for (const event of asRun(template, 'the-run-it-holds').slice(0, 3)) await store.append(event);
      const error = await failure(store.follow('another-run', 0));
      expect(error.code).toBe(ErrorCode.LOG_TRACE_MISMATCH);
      expect(error.hint).toMatch(/another run/);
    } finally {
      await store.close();
    }
  });

  it('should read a file once for all its followers in this process: they are handed the same event objects', async () => {
    const traceId = 'shared';
    const file = path.join(dir, `${traceId}.jsonl`);
    const store = await openJsonlEventStore(file, { fsync: 'never' });
    try {
      const run = asRun(template, traceId);
      await store.append(run[0] as AgentEvent);
      const followers = Array.from({ length: 20 }, (_, i) => drain(followJsonlLog(file, i % 3, { traceId })));
      for (const event of run.slice(1)) await store.append(event);
      const got = (await within(Promise.all(followers), 5000)) as AgentEvent[][];
      for (const [i, events] of got.entries()) expect(events).toEqual(run.slice(i % 3));
      const lastOf = got.map((events) => events.at(-1));
      expect(new Set(lastOf).size).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('should go on past the store that wrote the file being closed, with the appends of the next writer', async () => {
    const traceId = 'two-writers';
    const file = path.join(dir, `${traceId}.jsonl`);
    const run = asRun(template, traceId);
    const first = await openJsonlEventStore(file, { fsync: 'never' });
    for (const event of run.slice(0, 4)) await first.append(event);
    const following = drain(first.follow(traceId, 2));
    await first.close();
    expect(await within(following, 300)).toBe('pending');
    // A resume: another store opens the same file and goes on.
    const second = await openJsonlEventStore(file, { fsync: 'never' });
    try {
      for (const event of run.slice(4)) await second.append(event);
      expect(await within(following, 5000)).toEqual(run.slice(2));
    } finally {
      await second.close();
    }
  });
});
