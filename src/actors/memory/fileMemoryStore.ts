import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { MemoryRecord, MemoryStore } from '../memory.js';
import { checkConversationId, serializeMemory } from './inProcessMemoryStore.js';

/**
 * A {@link MemoryStore} keeping one `<conversationId>.json` file per conversation in `dir`: the
 * `memory.kv` store `file`.
 *
 * - `dir` is created (with its parents) on the first `save`; `load` from a missing directory or of
 *   an unknown conversation resolves to `undefined`.
 * - `save` is atomic: the JSON goes to a temporary file in `dir` (named `.<id>.json.<random>.tmp`,
 *   which no conversation id can collide with), is fsynced, then renamed over the old file, so a
 *   crash leaves either the old memory or the new one, never a torn file. Concurrent saves of one
 *   conversation: the last rename wins.
 * - A file that is not a JSON object fails `load` with `MEMORY_FAILED` naming the file; other I/O
 *   errors are `MEMORY_FAILED` too (retryable).
 * - Conversation ids are checked with `isValidConversationId` (`MEMORY_KEY_INVALID` otherwise), so
 *   an id can never leave `dir` (`../x`, `a/b`, `.hidden`). On a case-insensitive file system, ids
 *   differing only in case share a file.
 *
 * - `update` runs the updates of one conversation in this process one after the other; processes
 *   sharing a directory are not coordinated (use the NATS KV store for many workers).
 * @example
 * ```ts
 * const store = createFileMemoryStore('./memory');
 * await store.save('conv-1', { turns: [] }); // writes ./memory/conv-1.json
 * await store.load('conv-1');                // { turns: [] }
 * ```
 */
export function createFileMemoryStore(dir: string): MemoryStore {
  const root = resolve(dir);
  let ready: Promise<unknown> | undefined;
  const ensureDir = (): Promise<unknown> => {
    ready ??= mkdir(root, { recursive: true }).catch((error: unknown) => {
      ready = undefined;
      throw ioError(`cannot create memory directory ${root}`, error);
    });
    return ready;
  };

  // Updates of one conversation from this process run one after the other.
  const updating = new Map<string, Promise<unknown>>();

  const store: MemoryStore = {
    async load(conversationId) {
      checkConversationId(conversationId);
      const file = join(root, `${conversationId}.json`);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if (isErrno(error, 'ENOENT')) return undefined;
        throw ioError(`cannot read memory file ${file}`, error);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new RedflowError(
          {
            code: ErrorCode.MEMORY_FAILED,
            message: `memory file ${file} is corrupt: ${error instanceof Error ? error.message : String(error)}`,
            hint: 'fix or delete the file; the conversation then starts without memory',
            path: file,
          },
          { cause: error },
        );
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new RedflowError({
          code: ErrorCode.MEMORY_FAILED,
          message: `memory file ${file} is corrupt: it does not hold a JSON object`,
          hint: 'fix or delete the file; the conversation then starts without memory',
          path: file,
        });
      }
      return parsed as MemoryRecord;
    },

    async save(conversationId, memory) {
      checkConversationId(conversationId);
      const text = serializeMemory(memory, `conversation ${conversationId}`);
      await ensureDir();
      const file = join(root, `${conversationId}.json`);
      const temp = join(root, `.${conversationId}.json.${randomBytes(6).toString('hex')}.tmp`);
      try {
        const handle = await open(temp, 'wx', 0o600);
        try {
          await handle.writeFile(text, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, file);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw ioError(`cannot write memory file ${file}`, error);
      }
      await syncDirectory(root);
    },

    update(conversationId, change) {
      const previous = updating.get(conversationId) ?? Promise.resolve();
      const next = previous
        .catch(() => undefined)
        .then(async () => {
          const memory = change(await store.load(conversationId));
          await store.save(conversationId, memory);
          return JSON.parse(serializeMemory(memory, `conversation ${conversationId}`)) as MemoryRecord;
        });
      updating.set(conversationId, next);
      void next.finally(() => {
        if (updating.get(conversationId) === next) updating.delete(conversationId);
      }).catch(() => undefined);
      return next;
    },
  };
  return store;
}

/** Makes the rename durable. Best effort: some platforms cannot open a directory. */
async function syncDirectory(path: string): Promise<void> {
  try {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot fsync a directory; the rename itself is still atomic.
  }
}

function ioError(message: string, error: unknown): RedflowError {
  return new RedflowError(
    {
      code: ErrorCode.MEMORY_FAILED,
      message: `${message}: ${error instanceof Error ? error.message : String(error)}`,
      retryable: true,
    },
    { cause: error },
  );
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
