/**
 * A tiny router: enough for the API's dozen routes, without a framework. Paths are matched on
 * their raw segments, before decoding, so an encoded `/` (`%2F`) never splits a segment and no
 * dot-segment is ever resolved: `/api/flows/../x` reaches the flow route as the id `../x`, to be
 * refused there, instead of silently becoming `/api/x`.
 */

/** The HTTP methods the API uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What a pattern captured: `:name` one segment, `*name` the rest of the path joined with `/`. */
export type RouteParams = Readonly<Record<string, string>>;

/** One route: a method, a pattern such as `/api/runs/:traceId/stream`, and what answers it. */
export interface Route<H> {
  readonly method: Method;
  readonly pattern: string;
  readonly handler: H;
}

/** The result of {@link Router.match}. */
export type RouteMatch<H> =
  | { readonly kind: 'found'; readonly route: Route<H>; readonly params: RouteParams }
  /** The path exists, but not with this method: the methods it takes, for the `Allow` header. */
  | { readonly kind: 'method-not-allowed'; readonly allowed: readonly Method[] }
  | { readonly kind: 'not-found' };

/** Matches requests to routes. */
export interface Router<H> {
  match(method: string, pathname: string): RouteMatch<H>;
}

/**
 * Builds a router from routes. In a pattern, `:name` captures one non-empty segment and a final
 * `*name` captures one or more segments; captured segments are percent-decoded (left as they are
 * when the encoding is broken, so the route's own check refuses them).
 *
 * @example
 * ```ts
 * const router = createRouter([{ method: 'GET', pattern: '/api/runs/:traceId', handler: getRun }]);
 * const found = router.match('GET', '/api/runs/abc'); // { kind: 'found', params: { traceId: 'abc' }, … }
 * ```
 */
export function createRouter<H>(routes: readonly Route<H>[]): Router<H> {
  const compiled = routes.map((route) => ({ route, segments: route.pattern.split('/') }));
  return {
    match(method, pathname) {
      const segments = pathname.split('/');
      const allowed: Method[] = [];
      for (const { route, segments: pattern } of compiled) {
        const params = matchSegments(pattern, segments);
        if (params === undefined) continue;
        if (route.method === method) return { kind: 'found', route, params };
        allowed.push(route.method);
      }
      return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
    },
  };
}

function matchSegments(pattern: readonly string[], segments: readonly string[]): RouteParams | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as string;
    if (want.startsWith('*')) {
      const rest = segments.slice(i);
      if (rest.length === 0) return undefined;
      params[want.slice(1)] = rest.map(decodeSegment).join('/');
      return params;
    }
    const got = segments[i];
    if (got === undefined) return undefined;
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      params[want.slice(1)] = decodeSegment(got);
    } else if (want !== got) {
      return undefined;
    }
  }
  return segments.length === pattern.length ? params : undefined;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
