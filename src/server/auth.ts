import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHost } from '../actors/loopbackHost.js';
import { ApiError, ErrorCode, errorInfo, RedflowError } from '../errors.js';

/** The environment variable `redflow serve` reads its bearer token from when `--token` is not given. */
export const TOKEN_ENV = 'REDFLOW_TOKEN';

// Where the server binds is judged as a model server's address is: one rule for "this machine only".
export { isLoopbackHost } from '../actors/loopbackHost.js';

/**
 * Refuses to serve a non-loopback address without a token: anyone who can reach the port could
 * otherwise run flows (and through them, tools) on this machine.
 *
 * @throws RedflowError SERVE_TOKEN_REQUIRED
 */
export function assertTokenForHost(host: string, token: string | undefined): void {
  if (token !== undefined || isLoopbackHost(host)) return;
  throw new RedflowError(
    errorInfo(ErrorCode.SERVE_TOKEN_REQUIRED, `refusing to serve on ${host} without a token: anyone who can reach it could run your flows`, {
      hint: `give a long random token with --token <token> or ${TOKEN_ENV} (e.g. \`openssl rand -hex 32\`), or bind to 127.0.0.1`,
    }),
  );
}

/** Compares two secrets in time that does not depend on where they differ (or on their lengths). */
export function tokensEqual(given: string, expected: string): boolean {
  // Hashing first gives equal-length buffers, which timingSafeEqual needs, without leaking the length.
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Checks an API request's token: `Authorization: Bearer <token>`, or, where the route allows it
 * (the SSE stream: EventSource cannot send headers), `?token=<token>`.
 *
 * @throws ApiError HTTP_UNAUTHORIZED (401, with `WWW-Authenticate: Bearer`)
 */
export function authorize(
  headers: IncomingHttpHeaders,
  query: URLSearchParams,
  token: string,
  options: { readonly queryToken: boolean },
): void {
  const header = headers.authorization;
  const bearer = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  const fromQuery = options.queryToken ? (query.get('token') ?? undefined) : undefined;
  if (bearer !== undefined && tokensEqual(bearer, token)) return;
  if (fromQuery !== undefined && tokensEqual(fromQuery, token)) return;
  const given = bearer !== undefined || fromQuery !== undefined;
  throw new ApiError(
    errorInfo(ErrorCode.HTTP_UNAUTHORIZED, given ? 'the token is wrong' : 'this server needs a token', {
      hint: options.queryToken
        ? 'send Authorization: Bearer <token>, or add ?token=<token> to the stream URL'
        : 'send the header Authorization: Bearer <token> (the token redflow serve was started with)',
    }),
    { headers: { 'WWW-Authenticate': 'Bearer realm="redflow"' } },
  );
}

/**
 * Without a token, a loopback server answers only requests addressed to a local name. A web page
 * can make its own domain resolve to 127.0.0.1 (DNS rebinding) and then talk to this server as
 * "same origin"; its requests still carry its own name in `Host`, and are refused here.
 *
 * @throws ApiError HTTP_HOST_NOT_ALLOWED (403)
 */
export function assertLocalHostHeader(headers: IncomingHttpHeaders): void {
  const host = headers.host;
  if (host !== undefined && isLoopbackHost(hostName(host))) return;
  throw new ApiError(
    errorInfo(ErrorCode.HTTP_HOST_NOT_ALLOWED, `requests for ${JSON.stringify(host ?? '')} are not served: without a token, only local names are`, {
      hint: 'open the editor at http://127.0.0.1:<port>/ or http://localhost:<port>/, or start the server with --token',
    }),
  );
}

/** The name part of a `Host` header: `localhost:4800` → `localhost`, `[::1]:4800` → `::1`. */
function hostName(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(1, end);
  }
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
