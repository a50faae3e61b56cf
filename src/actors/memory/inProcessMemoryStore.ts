import { ErrorCode, RedflowError } from '../../errors.js';
import { isValidConversationId, type MemoryRecord, type MemoryStore } from '../memory.js';

/**
 * A {@link MemoryStore} that keeps memories in this process (lost when it exits): the `memory.kv`
 * store `memory`, and the store of tests.
 *
 * Memories are kept as JSON text, so `save` and `load` copy: changing an object after saving it,
 * or the object `load` returned, never changes what is stored. For the same reason only JSON
 * survives a round trip (`undefined` members are dropped, `Date`s become strings), exactly as with
 * the file store. A value JSON cannot hold (a cycle, a `BigInt`) fails with `MEMORY_FAILED`; an
 * invalid conversation id fails with `MEMORY_KEY_INVALID`.
 *
 * @example
 * ```ts
 * const store = createInProcessMemoryStore();
 * await store.save('conv-1', { turns: [] });
 * await store.load('conv-1'); // { turns: [] }
 * await store.load('conv-2'); // undefined
 * ```
 */
export function createInProcessMemoryStore(): MemoryStore {
  const memories = new Map<string, string>();
  return {
    // async, so a bad id or memory is a rejected promise, as with every other store.
    async load(conversationId) {
      checkConversationId(conversationId);
      const text = memories.get(conversationId);
      return text === undefined ? undefined : (JSON.parse(text) as MemoryRecord);
    },
    async save(conversationId, memory) {
      checkConversationId(conversationId);
      memories.set(conversationId, serializeMemory(memory, `conversation ${conversationId}`));
    },
    // Nothing awaits between the read and the write: one process, so no change can slip between.
    async update(conversationId, change) {
      checkConversationId(conversationId);
      const text = memories.get(conversationId);
      const next = change(text === undefined ? undefined : (JSON.parse(text) as MemoryRecord));
      const stored = serializeMemory(next, `conversation ${conversationId}`);
      memories.set(conversationId, stored);
      return JSON.parse(stored) as MemoryRecord;
    },
  };
}

/**
 * Throws `MEMORY_KEY_INVALID` unless `conversationId` passes {@link isValidConversationId}.
 * Shared by the memory stores.
 */
export function checkConversationId(conversationId: string): void {
  if (typeof conversationId === 'string' && isValidConversationId(conversationId)) return;
  throw new RedflowError({
    code: ErrorCode.MEMORY_KEY_INVALID,
    message: `invalid conversation id ${JSON.stringify(String(conversationId).slice(0, 140))}`,
    hint: "a conversation id is 1-128 letters, digits, '_', '-' or '.', not starting with '.'",
  });
}

/**
 * A memory as JSON text; throws `MEMORY_FAILED` when it is not a JSON object. Shared by the
 * memory stores.
 */
export function serializeMemory(memory: MemoryRecord, where: string): string {
  if (typeof memory !== 'object' || memory === null || Array.isArray(memory)) {
    throw new RedflowError({
      code: ErrorCode.MEMORY_FAILED,
      message: `memory of ${where} must be a JSON object`,
    });
  }
  try {
    return JSON.stringify(memory);
  } catch (error) {
    throw new RedflowError(
      {
        code: ErrorCode.MEMORY_FAILED,
        message: `memory of ${where} cannot be stored as JSON: ${error instanceof Error ? error.message : String(error)}`,
      },
      { cause: error },
    );
  }
}
