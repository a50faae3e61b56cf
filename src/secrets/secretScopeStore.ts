import { AsyncLocalStorage } from 'node:async_hooks';
import type { SecretRegistry } from './secretRegistry.js';

/**
 * The secret scopes the current asynchronous context is in, outermost first (see `secrets/secretScope.ts`).
 * A file of its own so that `secrets/secrets.ts` can read the scopes without importing the code that opens
 * them, which builds its registries with `secrets/secrets.ts`.
 */
export const secretScopes = new AsyncLocalStorage<readonly SecretRegistry[]>();

/** The registries of the scopes the caller runs in, outermost first; none outside any scope. */
export function currentSecretScopes(): readonly SecretRegistry[] {
  return secretScopes.getStore() ?? [];
}
