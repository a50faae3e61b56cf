import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { ROOTS_HINT, realPathInsideRoots } from '../../files/fileRoots.js';
import { locateJsonSyntaxError } from '../../files/jsonSyntaxError.js';
import type { MemoryRecord, MemoryStore } from '../memory.js';
import { checkConversationId, serializeMemory } from './inProcessMemoryStore.js';

/** Options of {@link createFileMemoryStore}. */
export interface FileMemoryStoreOptions {
  /** Folders the store's folder must be inside (symbolic links followed); default: no check. */
  readonly roots?: readonly string[];
}

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
 * - A file that is not a JSON object fails `load` with `MEMORY_FAILED` naming the conversation;
 *   other I/O errors are `MEMORY_FAILED` too (retryable). Messages name the conversation and the
 *   system's error code, never the file's path or content: they may reach a remote client.
 * - With `roots`, the folder must be inside one of them, symbolic links followed (checked before
 *   every read and write, `FLOW_FILE_OUTSIDE_ROOTS` otherwise): a flow's store cannot be pointed
 *   outside the folders allowed for its files, not even through a link made later.
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
export function createFileMemoryStore(dir: string, options: FileMemoryStoreOptions = {}): MemoryStore {
  const root = resolve(dir);
  const { roots } = options;
  /** The folder's real path, once checked against the roots. */
  const location = async (): Promise<string> => {
    if (roots === undefined) return root;
    const inside = await realPathInsideRoots(root, roots);
    if (inside.ok) return inside.file;
    throw new RedflowError(errorInfo(ErrorCode.FLOW_FILE_OUTSIDE_ROOTS, `the memory store's folder is refused: ${inside.why}`, { hint: ROOTS_HINT }));
  };
  const ensureDir = async (): Promise<string> => {
    const real = await location();
    try {
      await mkdir(real, { recursive: true });
    } catch (error) {
      throw ioError("cannot create the memory store's folder", error);
    }
    return real;
  };

  // Updates of one conversation from this process run one after the other.
  const updating = new Map<string, Promise<unknown>>();

  const store: MemoryStore = {
    async load(conversationId) {
      checkConversationId(conversationId);
      const file = join(await location(), `${conversationId}.json`);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return undefined;
        throw ioError(`cannot read the memory of conversation "${conversationId}"`, error);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        // Where, not what: JSON.parse's own message quotes the file's text.
        const at = locateJsonSyntaxError(text);
        throw new RedflowError(
          {
            code: ErrorCode.MEMORY_FAILED,
            message: `the memory of conversation "${conversationId}" is corrupt: it is not valid JSON${at ? ` (line ${at.line}, column ${at.column})` : ''}`,
            hint: `fix or delete ${conversationId}.json in the memory store's folder; the conversation then starts without memory`,
          },
          { cause: error },
        );
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new RedflowError({
          code: ErrorCode.MEMORY_FAILED,
          message: `the memory of conversation "${conversationId}" is corrupt: it does not hold a JSON object`,
          hint: `fix or delete ${conversationId}.json in the memory store's folder; the conversation then starts without memory`,
        });
      }
      return parsed as MemoryRecord;
    },

    async save(conversationId, memory) {
      checkConversationId(conversationId);
      const text = serializeMemory(memory, `conversation ${conversationId}`);
      const folder = await ensureDir();
      const file = join(folder, `${conversationId}.json`);
      const temp = join(folder, `.${conversationId}.json.${randomBytes(6).toString('hex')}.tmp`);
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
        throw ioError(`cannot write the memory of conversation "${conversationId}"`, error);
      }
      await syncDirectory(folder);
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

/** An I/O failure, by its system code only: the system's message names the file's absolute path. */
function ioError(message: string, error: unknown): RedflowError {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return new RedflowError(
    {
      code: ErrorCode.MEMORY_FAILED,
      message: `${message}: ${typeof code === 'string' ? code : 'an I/O error'}`,
      retryable: true,
    },
    { cause: error },
  );
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
