import { describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { MemoryStore } from '../../src/actors/memory.js';

/** Ids every store must refuse with MEMORY_KEY_INVALID (path traversal, empty, too long, …). */
export const INVALID_CONVERSATION_IDS = [
  '../x',
  '..',
  '.',
  '.hidden',
  'a/b',
  'a\\b',
  '',
  'x'.repeat(129),
  'x'.repeat(200),
  'nul\0byte',
  '/abs',
  'a*b',
  'a>b',
  'a b',
];

/** The RedflowError `promise` rejects with (fails the test when it resolves or throws something else). */
export async function failure(promise: Promise<unknown>): Promise<RedflowError> {
  const error: unknown = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

/**
 * The cases every {@link MemoryStore} must pass, as a `describe` block named `name`. `make` is
 * called once per test (inside it, so it may use `beforeEach` state) and may be async. The tests
 * use the conversation ids `contract-*`; a store sharing one backend across tests must start
 * without them.
 *
 * @example
 * ```ts
 * describeMemoryStoreContract('in-process store', () => createInProcessMemoryStore());
 * ```
 */
export function describeMemoryStoreContract(name: string, make: () => MemoryStore | Promise<MemoryStore>): void {
  describe(`${name} (MemoryStore contract)`, () => {
    it('should round-trip a memory', async () => {
      const store = await make();
      const memory = { turns: [{ input: 'hi', outcome: 'done', traceId: 't1' }], profile: { name: 'Ada', tags: ['x'] } };

      await store.save('contract-round-trip', memory);

      await expect(store.load('contract-round-trip')).resolves.toEqual(memory);
    });

    it('should return undefined for an unknown conversation', async () => {
      await expect((await make()).load('contract-never-saved')).resolves.toBeUndefined();
    });

    it('should keep conversations apart and replace on save', async () => {
      const store = await make();

      await store.save('contract-a', { n: 1 });
      await store.save('contract-b', { n: 2 });
      await store.save('contract-a', { n: 3 });

      await expect(store.load('contract-a')).resolves.toEqual({ n: 3 });
      await expect(store.load('contract-b')).resolves.toEqual({ n: 2 });
    });

    it('should not let the caller change a stored memory through the saved or loaded object', async () => {
      const store = await make();
      const memory = { nested: { count: 1 }, list: [1] };
      const saving = store.save('contract-alias', memory);
      memory.nested.count = 99; // while the save is in flight
      await saving;

      memory.list.push(2);
      const loaded = (await store.load('contract-alias')) as { nested: { count: number }; list: number[] };
      loaded.nested.count = 42;
      loaded.list.push(3);

      await expect(store.load('contract-alias')).resolves.toEqual({ nested: { count: 1 }, list: [1] });
    });

    it.each(INVALID_CONVERSATION_IDS)('should reject the conversation id %j with MEMORY_KEY_INVALID', async (id) => {
      const store = await make();

      expect((await failure(store.save(id, { x: 1 }))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
      expect((await failure(store.load(id))).code).toBe(ErrorCode.MEMORY_KEY_INVALID);
    });

    it('should refuse a memory that JSON cannot hold, or that is not an object', async () => {
      const store = await make();
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;

      expect((await failure(store.save('contract-bad', cyclic))).code).toBe(ErrorCode.MEMORY_FAILED);
      expect((await failure(store.save('contract-bad', [1] as unknown as Record<string, unknown>))).code).toBe(
        ErrorCode.MEMORY_FAILED,
      );
      await expect(store.load('contract-bad')).resolves.toBeUndefined();
    });
  });
}
