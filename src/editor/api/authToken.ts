/** The API's bearer token, as the user entered it: kept for the browser tab (sessionStorage). */
const TOKEN_KEY = 'redflow.token';

/** The token the user entered in this tab, if any. */
export function loadToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `token` for this tab (an empty token forgets it). */
export function saveToken(token: string): void {
  try {
    if (token === '') sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode): the token lasts until the page is reloaded.
  }
}
