import { createSecretRegistry } from './secrets.js';
import { currentSecretScopes, secretScopes } from './secretScopeStore.js';

/**
 * Secrets of one request or one call: redacted, by `redactSecrets` and `redactSecretsInData`, in
 * what the code running inside the scope records, answers, logs and throws, and nowhere else. A
 * key a client brings with a request is such a secret: held process-wide, a hostile "key" equal
 * to a word of someone else's answer, or to another user's session id, would be cut out of every
 * concurrent request's answers and records. Scopes follow the asynchronous context
 * (`AsyncLocalStorage`), so timers, promises and streams started inside a scope stay in it.
 */

/**
 * Runs `fn` in a new secret scope, inside the caller's (whose secrets stay redacted): secrets
 * given to {@link addScopedSecret} within it are redacted only in `fn`'s asynchronous context.
 *
 * @example
 * ```ts
 * createServer((req, res) => withSecretScope(() => handle(req, res).catch((error) => sendError(res, error))));
 * ```
 */
export function withSecretScope<T>(fn: () => T): T {
  return secretScopes.run([...currentSecretScopes(), createSecretRegistry()], fn);
}

/**
 * Adds a secret to the innermost scope the caller runs in, for the rest of that scope's life.
 * Returns false, adding nothing, outside any scope. Values the registry ignores (shorter than
 * `MIN_SECRET_CHARS`, or without a letter) are ignored here too.
 *
 * @example
 * ```ts
 * addScopedSecret(body.user_api_keys.llmKey); // redacted in this request's answer, log and errors only
 * ```
 */
export function addScopedSecret(value: string | undefined | null): boolean {
  const scopes = currentSecretScopes();
  const innermost = scopes[scopes.length - 1];
  if (innermost === undefined) return false;
  innermost.add(value);
  return true;
}

/**
 * Runs `fn` in a new scope holding `value` as a secret: {@link withSecretScope} and
 * {@link addScopedSecret} in one, for a secret that lives as long as one call.
 *
 * @example
 * ```ts
 * const answer = await withScopedSecret(callKey, () => callTheModel(callKey));
 * ```
 */
export function withScopedSecret<T>(value: string | undefined | null, fn: () => T): T {
  return withSecretScope(() => {
    addScopedSecret(value);
    return fn();
  });
}
