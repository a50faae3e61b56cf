import { isIP } from 'node:net';

/**
 * True when `host` is reachable only from this machine: `localhost`, `127.0.0.0/8`, `::1` (and
 * `::ffff:127.x.x.x`). `0.0.0.0`, `::` and every other address are not.
 *
 * @example
 * ```ts
 * isLoopbackHost('127.0.0.1'); // true
 * isLoopbackHost('0.0.0.0'); // false
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) {
    // The URL parser writes IPv6 addresses in one canonical form: `0:0::1` → `[::1]`, `::ffff:127.0.0.1` → `[::ffff:7f00:1]`.
    const canonical = new URL(`http://[${lower}]/`).hostname;
    return canonical === '[::1]' || canonical.startsWith('[::ffff:7f');
  }
  return false;
}

/**
 * True when `url` (a model server's base URL) names a loopback host; false for anything else,
 * including text that is not a URL.
 *
 * @example
 * ```ts
 * isLoopbackUrl('http://127.0.0.1:11434/v1'); // true
 * isLoopbackUrl('https://api.openai.com/v1'); // false
 * ```
 */
export function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}
