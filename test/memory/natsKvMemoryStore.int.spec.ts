// Integration tests of the NATS KV memory store against a real nats-server with JetStream
// (NATS_URL, default 127.0.0.1:4222). Each run uses its own bucket, deleted in afterAll.
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { MemoryRecord, MemoryStore } from '../../src/actors/memory.js';
import { appendTurn } from '../../src/actors/memory/conversationMemory.js';
import {
  createNatsKvMemoryStore,
  type NatsKvMemoryStore,
  type NatsKvMemoryStoreOptions,
} from '../../src/nats/kv/natsKvMemoryStore.js';
import { describeMemoryStoreContract, failure, INVALID_CONVERSATION_IDS } from './memoryStoreContract.js';

const NATS_URL = process.env.NATS_URL ?? '127.0.0.1:4222';
const BUCKET = `redflow-test-memory-${randomBytes(4).toString('hex')}`;

let nc: NatsConnection;
let kv: KV;
const connections: NatsConnection[] = [];

async function newConnection(): Promise<NatsConnection> {
  try {
    const connection = await connect({ servers: NATS_URL, timeout: 2_000, reconnect: false });
    connections.push(connection);
    return connection;
  } catch (error) {
    throw new Error(
      `cannot reach a NATS server at ${NATS_URL} (${(error as Error).message}). These integration tests need ` +
        'nats-server with JetStream: start one with `nats-server -js` (or `docker run -p 4222:4222 nats -js`), ' +
        'or point NATS_URL at one.',
      { cause: error },
    );
  }
}

const makeStore = (options: NatsKvMemoryStoreOptions = {}): Promise<NatsKvMemoryStore> =>
  createNatsKvMemoryStore(nc, { bucket: BUCKET, ...options });

/** Load, change, save; on a retryable conflict load again. What a worker without `update` does. */
async function readModifyWrite(store: MemoryStore, id: string, change: (memory: MemoryRecord | undefined) => MemoryRecord): Promise<number> {
  for (let attempt = 1; attempt <= 50; attempt += 1) {
    const next = change(await store.load(id));
    try {
      await store.save(id, next);
      return attempt;
    } catch (error) {
      if (!(error instanceof RedflowError && error.code === ErrorCode.MEMORY_FAILED && error.retryable)) throw error;
    }
  }
  throw new Error(`no save of ${id} landed in 50 attempts`);
}

const turn = (traceId: string) => ({ input: traceId, outcome: 'done', traceId });
const traceIds = (memory: MemoryRecord | undefined): string[] =>
  ((memory?.turns ?? []) as Array<{ traceId: string }>).map((t) => t.traceId).sort();

beforeAll(async () => {
  nc = await newConnection();
  await createNatsKvMemoryStore(nc, { bucket: BUCKET }); // creates the bucket
  kv = await new Kvm(nc).open(BUCKET);
});

afterAll(async () => {
  if (nc !== undefined && !nc.isClosed()) {
    await new Kvm(nc)
      .open(BUCKET)
      .then((bucket) => bucket.destroy())
      .catch(() => undefined);
  }
  await Promise.all(connections.filter((c) => !c.isClosed()).map((c) => c.close()));
});

describeMemoryStoreContract('NATS KV store', () => makeStore());

describe('createNatsKvMemoryStore', () => {
  it('should round-trip ids with dots as distinct keys', async () => {
    const store = await makeStore();
    const ids = ['dots.a.b', 'dots.a..b', 'dots.a.', 'dots-a-b', 'dots_a.b-'];

    for (const [i, id] of ids.entries()) await store.save(id, { i });

    for (const [i, id] of ids.entries()) await expect(store.load(id)).resolves.toEqual({ i });
    expect(JSON.parse((await kv.get('dots=a=b'))?.string() ?? 'null')).toEqual({ i: 0 });
  });

  it('should let a new store on a new connection read what an earlier one saved', async () => {
    await (await makeStore()).save('persist', { turns: [turn('t1')] });

    const other = await createNatsKvMemoryStore(await newConnection(), { bucket: BUCKET });

    await expect(other.load('persist')).resolves.toEqual({ turns: [turn('t1')] });
  });

  it('should report a value that is not JSON with MEMORY_FAILED naming bucket and key, and not overwrite it', async () => {
    await kv.put('corrupt', '{"turns": [');
    const store = await makeStore();

    const error = await failure(store.load('corrupt'));
    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.message).toContain(BUCKET);
    expect(error.message).toContain('key corrupt');
    expect(error.hint).toBeDefined();

    expect((await failure(store.update('corrupt', () => ({ fresh: true })))).code).toBe(ErrorCode.MEMORY_FAILED);
    expect((await failure(store.save('corrupt', { fresh: true }))).code).toBe(ErrorCode.MEMORY_FAILED);
    expect((await kv.get('corrupt'))?.string()).toBe('{"turns": [');
  });

  it('should report a value that is JSON but not an object', async () => {
    await kv.put('not-object', '[1,2]');

    const error = await failure((await makeStore()).load('not-object'));

    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.message).toContain('not-object');
  });

  it('should reject invalid ids with MEMORY_KEY_INVALID without sending anything', async () => {
    const connection = await newConnection();
    const store = await createNatsKvMemoryStore(connection, { bucket: BUCKET });
    const before = connection.stats().outMsgs;

    for (const id of INVALID_CONVERSATION_IDS) {
      expect((await failure(store.load(id))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
      expect((await failure(store.save(id, { x: 1 }))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
      expect((await failure(store.update(id, () => ({ x: 1 })))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
    }

    expect(connection.stats().outMsgs).toBe(before);
  });

  it('should refuse a memory over maxValueBytes with a hint, writing nothing', async () => {
    const store = await makeStore({ maxValueBytes: 1024 });

    const error = await failure(store.save('big', { text: 'x'.repeat(2000) }));
    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.message).toContain('1024');
    expect(error.hint).toContain('maxValueBytes');
    expect((await failure(store.update('big', () => ({ text: 'x'.repeat(2000) })))).code).toBe(ErrorCode.MEMORY_FAILED);

    await expect(store.load('big')).resolves.toBeUndefined();
    await store.save('big', { text: 'small' });
  });

  it("should say the bucket is smaller than the store's limit when the server refuses a value as too large", async () => {
    // A bucket made elsewhere with a smaller maxValueSize: the store's own limit lets the value
    // through, and the server refuses it (JetStream's code 10054).
    const small = `${BUCKET}-small`;
    await new Kvm(nc).create(small, { maxValueSize: 256 });
    try {
      const store = await createNatsKvMemoryStore(nc, { bucket: small, maxValueBytes: 4096 });
      const error = await failure(store.save('big', { text: 'x'.repeat(1000) }));
      expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
      expect(error.message).toContain('larger than the bucket allows');
      expect(error.retryable).toBe(false);
      expect(error.hint).toContain('smaller maxValueSize');
    } finally {
      await (await new Kvm(nc).open(small)).destroy();
    }
  });

  it('should refuse a maxValueBytes over the server max_payload or bad options', async () => {
    for (const options of [{ maxValueBytes: (nc.info?.max_payload ?? 1_048_576) + 1 }, { maxValueBytes: 0 }, { history: 65 }, { bucket: 'bad.bucket' }]) {
      expect((await failure(makeStore(options))).code).toBe(ErrorCode.MEMORY_FAILED);
    }
  });

  it('should land every turn when twelve writers on two connections read-modify-write one conversation concurrently', async () => {
    // One store instance per writer, as the store's contract asks of load/save users: an instance
    // remembers one revision per conversation, so it cannot tell two interleaved load/save pairs apart.
    const other = await newConnection();
    const writers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => createNatsKvMemoryStore(i % 2 === 0 ? nc : other, { bucket: BUCKET })),
    );

    await Promise.all(
      writers.map((writer, i) => readModifyWrite(writer, 'shared-rmw', (m) => appendTurn(m, turn(`${i % 2 === 0 ? 'a' : 'b'}${Math.floor(i / 2)}`), 100))),
    );

    expect(traceIds(await writers[0]!.load('shared-rmw'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
  });

  it('should land every turn when two stores update one conversation concurrently', async () => {
    const [a, b] = [await makeStore({ updateAttempts: 50 }), await createNatsKvMemoryStore(await newConnection(), { bucket: BUCKET, updateAttempts: 50 })];

    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => [
        a.update('shared-update', (m) => appendTurn(m, turn(`a${i}`), 100)),
        b.update('shared-update', (m) => appendTurn(m, turn(`b${i}`), 100)),
      ]).flat(),
    );

    expect(traceIds(await b.load('shared-update'))).toHaveLength(16);
    expect(new Set(traceIds(await a.load('shared-update')))).toEqual(new Set(results.flatMap((r) => traceIds(r))));
  });

  it('should fail a save based on a stale read instead of losing the other turn', async () => {
    const [a, b] = [await makeStore(), await makeStore()];
    await a.save('stale', appendTurn(undefined, turn('t0'), 10));
    const seenByA = await a.load('stale');
    const seenByB = await b.load('stale');

    await a.save('stale', appendTurn(seenByA, turn('a'), 10));
    const error = await failure(b.save('stale', appendTurn(seenByB, turn('b'), 10)));

    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.retryable).toBe(true);
    expect(error.hint).toContain('load');
    expect(traceIds(await a.load('stale'))).toEqual(['a', 't0']);
    // Retrying the same stale save still fails; loading again first works.
    await failure(b.save('stale', appendTurn(seenByB, turn('b'), 10)));
    await b.save('stale', appendTurn(await b.load('stale'), turn('b'), 10));
    expect(traceIds(await a.load('stale'))).toEqual(['a', 'b', 't0']);
  });

  it('should treat a repeated save that already landed as success', async () => {
    const [a, b] = [await makeStore(), await makeStore()];
    await a.save('repeat', { v: 1 });

    await b.save('repeat', { v: 1 }); // b never read it, but the value is already exactly this

    await b.save('repeat', { v: 2 });
    await expect(a.load('repeat')).resolves.toEqual({ v: 2 });
  });

  it('should save over a deleted key and load it as missing', async () => {
    const store = await makeStore();
    await store.save('deleted', { v: 1 });
    await kv.delete('deleted');

    await expect(store.load('deleted')).resolves.toBeUndefined();
    await store.save('deleted', { v: 2 });
    await expect((await makeStore()).update('deleted', (m) => ({ v: Number(m?.v) + 1 }))).resolves.toEqual({ v: 3 });
  });

  it('should give up with a retryable MEMORY_FAILED when the retry budget runs out', async () => {
    const store = await makeStore({ updateAttempts: 3 });
    let calls = 0;

    const error = await failure(
      store.update('contended', (memory) => {
        calls += 1;
        void kv.put('contended', JSON.stringify({ other: calls })); // another writer always gets in first
        return { ...memory, mine: calls };
      }),
    );

    expect(calls).toBe(3);
    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('3 update attempts');
  });

  it('should report a closed connection as a retryable MEMORY_FAILED with a hint', async () => {
    const connection = await newConnection();
    const store = await createNatsKvMemoryStore(connection, { bucket: BUCKET });
    await connection.close();

    for (const attempt of [store.load('closed'), store.save('closed', { x: 1 }), createNatsKvMemoryStore(connection, { bucket: BUCKET })]) {
      const error = await failure(attempt);
      expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
      expect(error.retryable).toBe(true);
      expect(error.hint).toContain('nats-server');
    }
  });
});
