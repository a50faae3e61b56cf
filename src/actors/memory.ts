/** A conversation's memory: a JSON object, loaded into `envelope.memory` at the start of a run. */
export type MemoryRecord = Record<string, unknown>;

/**
 * Where `memory.kv` keeps memories, keyed by conversation id. Implementations: in-process, file,
 * and (distributed mode) NATS KV. Conversation ids are checked with `isValidConversationId`.
 *
 * @example
 * ```ts
 * const memory: MemoryStore = createFileMemoryStore('.redflow/memory');
 * await memory.save('conversation-1', { summary: 'asked about order A-1001' });
 * const record = await memory.load('conversation-1'); // undefined for a conversation never saved
 * ```
 */
export interface MemoryStore {
  load(conversationId: string): Promise<MemoryRecord | undefined>;
  save(conversationId: string, memory: MemoryRecord): Promise<void>;
  /**
   * Read-modify-write of one conversation without losing a concurrent change: what a run uses to
   * add its turn at the end (`change` may be called more than once). Resolves with what was stored.
   */
  update(conversationId: string, change: (memory: MemoryRecord | undefined) => MemoryRecord): Promise<MemoryRecord>;
}

/** Conversation ids are 1–128 characters of letters, digits, `_`, `-`, `.` (not starting with `.`). */
export function isValidConversationId(id: string): boolean {
  return /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/.test(id);
}
