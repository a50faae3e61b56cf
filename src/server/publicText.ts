import { readdirSync } from 'node:fs';
import { errorInfo, type ErrorInfo } from '../errors.js';

/**
 * What an HTTP client may read of an error the server met: its words without the server's
 * internals. Absolute paths on the server's disk (a run log's file, the runs directory) and the
 * addresses of the servers it talks to (the model server's base URL, Node-RED's, NATS') are cut
 * out; the full text goes to the server's own log only.
 */

/** What an address (`http://…`, `nats://…`, `file://…`) becomes: every address in an error is the server's configuration. */
export const HIDDEN_ADDRESS = '[server address]';

/** A URL with a scheme, up to the first character that cannot be in one unquoted (`<port>` placeholders included). */
const ADDRESS = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s'"`()[\]{}]+/g;

/** Punctuation a sentence puts after a URL, left in place. */
const TRAILING = /[.,:;!?]+$/;

/** A Windows path with its drive letter. */
const WINDOWS_PATH = /\b[A-Za-z]:\\[^\s'"`<>|*?]+/g;

/** The characters a path segment in a message is made of (a sentence's punctuation ends it). */
const SEGMENT = String.raw`[^\s'"\x60<>()[\]{},;:|*?]+`;

let rootPaths: RegExp | null | undefined;

/**
 * Absolute POSIX paths whose first directory is one of this machine's root directory (`/tmp/…`,
 * `/home/…`, `/srv/…`): a path on the server. A JSON pointer (`/user_api_keys/llmKey`) or an API
 * route (`/api/runs/…`) names no directory of the root, so it stays. Read once: the root does not
 * change under a server.
 */
function serverPaths(): RegExp | null {
  if (rootPaths !== undefined) return rootPaths;
  let names: string[];
  try {
    names = readdirSync('/');
  } catch {
    names = [];
  }
  const alternatives = names.filter((name) => name !== '' && !/[\s]/.test(name)).map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  rootPaths = alternatives.length === 0 ? null : new RegExp(String.raw`(?<![\w.~/\\-])/(?:${alternatives.join('|')})(?:/${SEGMENT})*(?=$|[^\w.-])`, 'g');
  return rootPaths;
}

/** `…/<last segment>`: the file's name says which run or flow, the directories above it stay on the server. */
function shortened(found: string): string {
  const name = found.split(/[\\/]/).filter((part) => part !== '').pop();
  return name === undefined ? '…' : `…/${name}`;
}

/**
 * `text` without the server's absolute paths (each becomes `…/<its last segment>`) and without
 * addresses (each becomes {@link HIDDEN_ADDRESS}).
 *
 * @example
 * ```ts
 * publicText('cannot append to /srv/redflow/runs/s-q1.jsonl'); // 'cannot append to …/s-q1.jsonl'
 * publicText('http://10.0.0.5:8000/v1 did not answer'); // '[server address] did not answer'
 * ```
 */
export function publicText(text: string): string {
  let shown = text.replace(ADDRESS, (found) => {
    // A template such as http://127.0.0.1:<port>/ in a hint is advice, not an address.
    if (found.includes('<')) return found;
    const after = TRAILING.exec(found)?.[0] ?? '';
    return `${HIDDEN_ADDRESS}${after}`;
  });
  shown = shown.replace(WINDOWS_PATH, shortened);
  const paths = serverPaths();
  return paths === null ? shown : shown.replace(paths, shortened);
}

/**
 * An error as a client may see it: code, message and hint (retryable and path when set), the
 * message, hint and path through {@link publicText}. `withheld` says whether anything was cut, so
 * the caller can log the full error on the server.
 */
export function publicErrorInfo(info: ErrorInfo): { readonly info: ErrorInfo; readonly withheld: boolean } {
  const message = publicText(info.message);
  const hint = info.hint === undefined ? undefined : publicText(info.hint);
  const path = info.path === undefined ? undefined : publicText(info.path);
  const withheld = message !== info.message || hint !== info.hint || path !== info.path;
  return { info: errorInfo(info.code, message, { hint, retryable: info.retryable, path }), withheld };
}
