import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { MemoryStore } from '../../src/actors/memory.js';
import { createFileMemoryStore } from '../../src/actors/memory/fileMemoryStore.js';
import { createInProcessMemoryStore } from '../../src/actors/memory/inProcessMemoryStore.js';

async function failure(promise: Promise<unknown>): Promise<RedflowError> {
  const error: unknown = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

const TRAVERSAL_IDS = ['../x', '..', '.', '.hidden', 'a/b', 'a\\b', '', 'x'.repeat(129), 'nul\0byte', '/abs'];

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'redflow-memory-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores: ReadonlyArray<[string, () => MemoryStore]> = [
  ['in-process store', () => createInProcessMemoryStore()],
  ['file store', () => createFileMemoryStore(join(dir, 'memories'))],
];

describe.each(stores)('%s', (_label, makeStore) => {
  it('should round-trip a memory', async () => {
    const store = makeStore();
    const memory = { turns: [{ input: 'hi', outcome: 'done', traceId: 't1' }], profile: { name: 'Ada', tags: ['x'] } };

    await store.save('conv-1', memory);

    await expect(store.load('conv-1')).resolves.toEqual(memory);
  });

  it('should return undefined for an unknown conversation', async () => {
    await expect(makeStore().load('never-saved')).resolves.toBeUndefined();
  });

  it('should keep conversations apart and replace on save', async () => {
    const store = makeStore();

    await store.save('a', { n: 1 });
    await store.save('b', { n: 2 });
    await store.save('a', { n: 3 });

    await expect(store.load('a')).resolves.toEqual({ n: 3 });
    await expect(store.load('b')).resolves.toEqual({ n: 2 });
  });

  it('should not let the caller change a stored memory through the saved or loaded object', async () => {
    const store = makeStore();
    const memory = { nested: { count: 1 }, list: [1] };
    await store.save('conv', memory);

    memory.nested.count = 99;
    memory.list.push(2);
    const loaded = (await store.load('conv')) as { nested: { count: number }; list: number[] };
    loaded.nested.count = 42;
    loaded.list.push(3);

    await expect(store.load('conv')).resolves.toEqual({ nested: { count: 1 }, list: [1] });
  });

  it.each(TRAVERSAL_IDS)('should reject the conversation id %j with MEMORY_KEY_INVALID', async (id) => {
    const store = makeStore();

    expect((await failure(store.save(id, { x: 1 }))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
    expect((await failure(store.load(id))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
  });

  it('should refuse a memory that JSON cannot hold', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;

    expect((await failure(makeStore().save('c', cyclic))).code).toBe(ErrorCode.MEMORY_FAILED);
  });
});

describe('createFileMemoryStore', () => {
  it('should create the directory and write one <id>.json file per conversation', async () => {
    const root = join(dir, 'deep', 'memories');
    const store = createFileMemoryStore(root);

    await store.save('conv-1', { a: 1 });
    await store.save('conv.2', { b: 2 });

    expect((await readdir(root)).sort()).toEqual(['conv-1.json', 'conv.2.json']);
    expect(JSON.parse(await readFile(join(root, 'conv-1.json'), 'utf8'))).toEqual({ a: 1 });
  });

  it('should return undefined when the directory does not exist yet', async () => {
    await expect(createFileMemoryStore(join(dir, 'missing')).load('conv')).resolves.toBeUndefined();
  });

  it('should let a new store instance read what an earlier one saved', async () => {
    const root = join(dir, 'memories');
    await createFileMemoryStore(root).save('conv', { turns: [{ outcome: 'done' }] });

    await expect(createFileMemoryStore(root).load('conv')).resolves.toEqual({ turns: [{ outcome: 'done' }] });
  });

  it('should leave no temporary files behind after saving', async () => {
    const store = createFileMemoryStore(dir);

    await Promise.all(Array.from({ length: 10 }, (_, i) => store.save('conv', { i })));

    expect(await readdir(dir)).toEqual(['conv.json']);
    const saved = (await store.load('conv')) as { i: number };
    expect(saved.i).toBeGreaterThanOrEqual(0);
  });

  it('should report a corrupt file with MEMORY_FAILED naming the conversation, not the file\'s path or text', async () => {
    await writeFile(join(dir, 'broken.json'), '{"turns": ["secret text', 'utf8');

    const error = await failure(createFileMemoryStore(dir).load('broken'));

    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.message).toContain('"broken"');
    expect(error.hint).toContain('broken.json');
    expect(JSON.stringify(error.toInfo())).not.toContain(dir);
    expect(JSON.stringify(error.toInfo())).not.toContain('secret');
  });

  it('should report a file that holds JSON but not an object', async () => {
    await writeFile(join(dir, 'array.json'), '[1,2]', 'utf8');

    const error = await failure(createFileMemoryStore(dir).load('array'));

    expect(error.code).toBe(ErrorCode.MEMORY_FAILED);
    expect(error.message).toContain('"array"');
    expect(error.message).toContain('not hold a JSON object');
  });

  it('should not touch files outside its directory for a traversal id', async () => {
    const root = join(dir, 'memories');
    await writeFile(join(dir, 'x.json'), '{"secret":true}', 'utf8');
    const store = createFileMemoryStore(root);

    await failure(store.save('../x', { overwritten: true }));
    await failure(store.load('../x'));

    expect(await readFile(join(dir, 'x.json'), 'utf8')).toBe('{"secret":true}');
  });
});

describe('memory store updates (read-modify-write)', () => {
  it.each([
    ['in-process', async () => createInProcessMemoryStore()],
    ['file', async () => createFileMemoryStore(await mkdtemp(join(tmpdir(), 'redflow-mem-update-')))],
  ])('should keep every one of many concurrent updates of one conversation (%s)', async (_name, make) => {
    const store = await make();
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.update('c1', (memory) => ({ turns: [...((memory?.turns as number[] | undefined) ?? []), i] })),
      ),
    );
    const memory = await store.load('c1');
    expect((memory?.turns as number[]).slice().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
