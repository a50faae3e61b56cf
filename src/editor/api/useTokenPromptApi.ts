import { useMemo, useRef, useState } from 'react';
import { createApiClient, type ApiClient } from './apiClient.js';
import { loadToken, saveToken } from './authToken.js';

/** The API client and, while a request waits for a token (it was answered 401), how to give it one. */
export interface TokenPromptApi {
  readonly api: ApiClient;
  /** Set while a token is asked for: call it with the token typed, or undefined to cancel. */
  readonly tokenResolver: ((token: string | undefined) => void) | undefined;
}

/**
 * The editor's API client, asking the user for a token when the server answers 401 (the token is
 * kept for the next visit). Requests answered 401 at the same time share one prompt.
 *
 * @example
 * ```tsx
 * const { api, tokenResolver } = useTokenPromptApi();
 * return tokenResolver && <TokenPrompt onSubmit={tokenResolver} onCancel={() => tokenResolver(undefined)} />;
 * ```
 */
export function useTokenPromptApi(): TokenPromptApi {
  const [tokenResolver, setTokenResolver] = useState<(token: string | undefined) => void>();
  const pendingToken = useRef<Promise<string | undefined> | undefined>(undefined);
  const api = useMemo(
    () =>
      createApiClient({
        getToken: loadToken,
        requestToken: () =>
          (pendingToken.current ??= new Promise<string | undefined>((resolve) => {
            setTokenResolver(() => (token: string | undefined) => {
              if (token !== undefined) saveToken(token);
              pendingToken.current = undefined;
              setTokenResolver(undefined);
              resolve(token);
            });
          })),
      }),
    [],
  );
  return { api, tokenResolver };
}
