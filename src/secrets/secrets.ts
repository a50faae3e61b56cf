import type { SecretRegistry } from './secretRegistry.js';
import { currentSecretScopes } from './secretScopeStore.js';

/**
 * The secret values this process knows (API keys, secret headers, passwords, tokens), and the one
 * way to cut them out of text and data before it is recorded or sent: each occurrence becomes
 * {@link REDACTED}. Whoever learns a secret registers it ({@link registerSecret}); the environment's
 * secret-looking variables are registered the first time anything is redacted. Secrets of one
 * request or call (a key a client brought) are scoped instead (`secrets/secretScope.ts`): redacted only in
 * what that request's own code records, answers and throws.
 */

/** What a secret is replaced with in everything Redflow records, prints or sends. */
export const REDACTED = '[redacted]';

/**
 * Shortest value treated as a secret. Shorter ones would match ordinary words and numbers in
 * answers and logs, and guard little: a real key, token or password is longer.
 */
export const MIN_SECRET_CHARS = 8;

/** Names of environment variables that hold secrets by convention (`OPENAI_API_KEY`, `PGPASSWORD`, …). */
const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|SESSION|PRIVATE|AUTH(?!OR)/i;
/** …except those naming a place rather than holding a secret (`SSH_AUTH_SOCK`, `*_KEY_FILE`). */
const PLACE_ENV_NAME = /_(SOCK|SOCKET|PATH|FILE|DIR|HOME)$/i;
/** The password of a `scheme://user:password@host` URL. */
const URL_PASSWORD = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/@\s:]*:([^/@\s]+)@/;
/** A value must have a letter: a bare number would be found in counts, times and sequence numbers. */
const HAS_LETTER = /[A-Za-z]/;

/**
 * A registry of its own (tests, a host that keeps tenants apart). Redflow itself uses the
 * process-wide one behind {@link registerSecret} and {@link redactSecrets}.
 *
 * @example
 * ```ts
 * const secrets = createSecretRegistry();
 * secrets.add('sk-live-0123456789');
 * secrets.redact('key sk-live-0123456789'); // 'key [redacted]'
 * ```
 */
export function createSecretRegistry(): SecretRegistry {
  const values = new Set<string>();
  /** Values given to `add`, so a secret read again (a header on every call) costs one lookup. */
  const given = new Set<string>();
  /** Forms added for good (by `add`): never forgotten. */
  const kept = new Set<string>();
  /** How many holders each held form has. */
  const holders = new Map<string, number>();
  /** One alternation of every value, longest first so a secret containing another is cut whole: one scan per text. */
  let finder: Finder | undefined;
  let dirty = false;

  const compile = (): Finder | undefined => {
    if (dirty) {
      const source = [...values].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
      finder = source === '' ? undefined : { test: new RegExp(source), replace: new RegExp(source, 'g') };
      dirty = false;
    }
    return finder;
  };

  const addOne = (value: string): void => {
    if (value.length < MIN_SECRET_CHARS || !HAS_LETTER.test(value)) return;
    kept.add(value);
    if (values.has(value)) return;
    values.add(value);
    dirty = true;
  };

  /** The forms a secret takes: as is, inside JSON text (quotes, backslashes, control characters escaped), in a URL. */
  const formsOf = (value: string): string[] =>
    [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])].filter(
      (form) => form.length >= MIN_SECRET_CHARS && HAS_LETTER.test(form),
    );

  const registry: SecretRegistry = {
    add(value) {
      if (typeof value !== 'string' || value.length < MIN_SECRET_CHARS || given.has(value)) return;
      given.add(value);
      for (const form of formsOf(value)) addOne(form);
    },
    hold(value) {
      if (typeof value !== 'string' || value.length < MIN_SECRET_CHARS) return () => {};
      const forms = formsOf(value);
      for (const form of forms) {
        holders.set(form, (holders.get(form) ?? 0) + 1);
        if (!values.has(form)) {
          values.add(form);
          dirty = true;
        }
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        for (const form of forms) {
          const left = (holders.get(form) ?? 1) - 1;
          if (left > 0) {
            holders.set(form, left);
            continue;
          }
          holders.delete(form);
          if (!kept.has(form) && values.delete(form)) dirty = true;
        }
      };
    },
    addEnv(env) {
      for (const [name, value] of Object.entries(env)) {
        if (typeof value !== 'string' || value.length < MIN_SECRET_CHARS) continue;
        const password = URL_PASSWORD.exec(value)?.[1];
        if (password !== undefined) {
          registry.add(password);
          registry.add(safeDecode(password));
        }
        if (SECRET_ENV_NAME.test(name) && !PLACE_ENV_NAME.test(name) && !/\s/.test(value) && !value.startsWith('/')) {
          registry.add(value);
        }
      }
    },
    redact(text) {
      const found = compile();
      return found === undefined || text.length < MIN_SECRET_CHARS ? text : text.replace(found.replace, REDACTED);
    },
    redactData<T>(value: T): T {
      if (typeof value === 'string') return registry.redact(value) as T;
      if (typeof value !== 'object' || value === null) return value;
      const found = compile();
      // A string shorter than any secret cannot hold one: ids, codes and keys are skipped unscanned.
      if (found === undefined || !someString(value, (text) => text.length >= MIN_SECRET_CHARS && found.test.test(text))) return value;
      return copyStrings(value, (text) => (text.length >= MIN_SECRET_CHARS ? text.replace(found.replace, REDACTED) : text)) as T;
    },
    get size() {
      return values.size;
    },
  };
  return registry;
}

/** The two forms of one pattern: `test` keeps no state between calls, `replace` is global. */
interface Finder {
  readonly test: RegExp;
  readonly replace: RegExp;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** True when `test` holds for a string or key anywhere in `root` (walked with a stack, not recursion). */
function someString(root: object, test: (text: string) => boolean): boolean {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown> | unknown[];
    if (Array.isArray(node)) {
      for (const item of node) {
        if (typeof item === 'string') {
          if (test(item)) return true;
        } else if (typeof item === 'object' && item !== null) stack.push(item);
      }
    } else {
      for (const key of Object.keys(node)) {
        if (test(key)) return true;
        const item = node[key];
        if (typeof item === 'string') {
          if (test(item)) return true;
        } else if (typeof item === 'object' && item !== null) stack.push(item);
      }
    }
  }
  return false;
}

/** A copy of `root` with `map` applied to every string and key (walked with a stack, not recursion). */
function copyStrings(root: object, map: (text: string) => string): unknown {
  interface Frame {
    readonly source: Record<string, unknown> | unknown[];
    readonly target: Record<string, unknown> | unknown[];
    readonly keys: readonly string[] | undefined;
    next: number;
  }
  const frameOf = (source: object): Frame => {
    const array = Array.isArray(source);
    return {
      source: source as Frame['source'],
      target: array ? [] : {},
      keys: array ? undefined : Object.keys(source),
      next: 0,
    };
  };
  const top = frameOf(root);
  const stack: Frame[] = [top];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const length = frame.keys === undefined ? (frame.source as unknown[]).length : frame.keys.length;
    if (frame.next >= length) {
      stack.pop();
      continue;
    }
    const index = frame.next++;
    const key = frame.keys === undefined ? index : (frame.keys[index] as string);
    const item = (frame.source as Record<string | number, unknown>)[key];
    let copied: unknown = item;
    if (typeof item === 'string') copied = map(item);
    else if (typeof item === 'object' && item !== null) {
      const child = frameOf(item);
      copied = child.target;
      stack.push(child);
    }
    if (frame.keys === undefined) {
      (frame.target as unknown[])[index] = copied;
      continue;
    }
    const name = map(key as string);
    // Assigned "__proto__" would set the prototype: in data it must stay a plain key.
    if (name === '__proto__') Object.defineProperty(frame.target, name, { value: copied, enumerable: true, writable: true, configurable: true });
    else (frame.target as Record<string, unknown>)[name] = copied;
  }
  return top.target;
}

/** The process-wide registry: whatever this process knows is secret. */
const processSecrets = createSecretRegistry();
let environmentRead = false;

/** The process-wide registry, with `process.env` read into it on first use. */
function processRegistry(): SecretRegistry {
  if (!environmentRead) {
    environmentRead = true;
    processSecrets.addEnv(process.env);
  }
  return processSecrets;
}

/**
 * Tells the process a value is secret: from now on it is redacted from everything recorded or
 * sent (the event log, stdout, the HTTP API and its streams, actor replies). Model keys, secret
 * headers of `tool.http`, `tool.postgres` passwords, the serve token and NATS credentials are
 * registered by the code that reads them; call this for any other secret your own actors hold.
 *
 * @example
 * ```ts
 * registerSecret(process.env.WEATHER_API_TOKEN);
 * ```
 */
export function registerSecret(value: string | undefined | null): void {
  processRegistry().add(value);
}

/**
 * Tells the process a value is secret until the returned function is called (see
 * {@link SecretRegistry.hold}), so a long-running process does not keep it for good. Held
 * process-wide: it is redacted from every concurrent request's output too. For a value a client
 * sent, which could be anything (a word, another user's id), use `withScopedSecret` instead.
 *
 * @example
 * ```ts
 * const release = holdSecret(requestKey);
 * try { return await callTheModel(requestKey); } finally { release(); }
 * ```
 */
export function holdSecret(value: string | undefined | null): () => void {
  return processRegistry().hold(value);
}

/**
 * Registers the secrets of an environment other than `process.env` (which is read by itself), as
 * {@link SecretRegistry.addEnv} describes.
 */
export function registerEnvironmentSecrets(env: Readonly<Record<string, string | undefined>>): void {
  processRegistry().addEnv(env);
}

/**
 * `text` with every secret this process knows replaced by {@link REDACTED}, and those of the
 * secret scopes the caller runs in (`withSecretScope`).
 *
 * @example
 * ```ts
 * line(output.err, redactSecrets(`error ${error.code}: ${error.message}`));
 * ```
 */
export function redactSecrets(text: string): string {
  let redacted = processRegistry().redact(text);
  for (const scope of currentSecretScopes()) redacted = scope.redact(redacted);
  return redacted;
}

/**
 * JSON data with every secret this process knows (and those of the caller's secret scopes)
 * redacted from its strings and keys: `value` itself when none occurs, else a copy.
 */
export function redactSecretsInData<T>(value: T): T {
  let redacted = processRegistry().redactData(value);
  for (const scope of currentSecretScopes()) redacted = scope.redactData(redacted);
  return redacted;
}
