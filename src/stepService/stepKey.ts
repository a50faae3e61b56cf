import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { REDACTED } from '../secrets/secrets.js';
import { addScopedSecret } from '../secrets/secretScope.js';

/** Shortest `llmKey` taken: providers' keys are far longer, and a short one would match ordinary words. */
export const MIN_STEP_KEY_CHARS = 20;

/** Longest `llmKey` taken, as the request schema says. */
const MAX_STEP_KEY_CHARS = 1000;

/** What a provider's key is made of: printable ASCII, no spaces, at least one letter. */
const KEY_SHAPE = /^(?=.*[A-Za-z])[!-~]+$/;

const KEY_PATH = '/user_api_keys/llmKey';

/** A step's body with its key kept out of everything but the key's own field. */
export interface HeldStepKey {
  /** The body with the key replaced by `[redacted]` everywhere but `user_api_keys.llmKey`. */
  readonly body: unknown;
}

/**
 * Keeps a step's own key (`user_api_keys.llmKey`) to its model calls, whatever else the body does
 * with it. The key becomes a secret of the request's scope (`addScopedSecret`; the server runs
 * each request in one), so the request's answer, its run's records, its errors and what the
 * server logs for it are redacted, and no other request's: a client's key could be any string,
 * such as another user's session id. It is also replaced by `[redacted]` in every other string
 * and property name of the body before anything reads it, since what a step brings is recorded
 * (the query and the history in the session's log, the session id in its trace id and file name)
 * and sent to the model. A key pasted into a query, a tool's observation or an id, or sent as the
 * model's name, goes nowhere but into the provider's key header.
 *
 * @throws ApiError 400 `HTTP_BODY_INVALID` (path `/user_api_keys/llmKey`) for a key that cannot
 *   be a provider's: shorter than {@link MIN_STEP_KEY_CHARS} or longer than 1000 characters, with
 *   spaces, control or non-ASCII characters, or without a letter. The error never quotes the key.
 * @example
 * ```ts
 * const request = parseReactStepRequest(holdStepKey(await readJsonBody(req, { maxBytes })).body);
 * ```
 */
export function holdStepKey(body: unknown): HeldStepKey {
  const key = stepKeyOf(body);
  if (key === undefined) return { body };
  if (key.length < MIN_STEP_KEY_CHARS || key.length > MAX_STEP_KEY_CHARS || !KEY_SHAPE.test(key)) throw keyRefused(key);
  addScopedSecret(key);
  const redacted = withoutKey(body, key) as Record<string, unknown>;
  // The one place the key stays: where the step service takes it for the model's calls.
  return { body: { ...redacted, user_api_keys: { ...(redacted.user_api_keys as object), llmKey: key } } };
}

/** The 400 for a key that cannot be a provider's: says what is wrong with it, never what it is. */
function keyRefused(key: string): ApiError {
  const why =
    key.length < MIN_STEP_KEY_CHARS
      ? `is ${key.length} characters long, shorter than any provider's key (at least ${MIN_STEP_KEY_CHARS})`
      : key.length > MAX_STEP_KEY_CHARS
        ? `is longer than ${MAX_STEP_KEY_CHARS} characters`
        : /[^!-~]/.test(key)
          ? 'holds spaces, control or non-ASCII characters'
          : 'has no letter';
  const message = `user_api_keys.llmKey ${why}: it cannot be an API key`;
  return new ApiError(errorInfo(ErrorCode.HTTP_BODY_INVALID, message, { path: KEY_PATH, hint: 'send the provider\'s API key as it is, without quotes, spaces or line breaks; leave llmKey out to use the server\'s key' }), {
    fields: [{ path: KEY_PATH, message: `${why}: it cannot be an API key` }],
  });
}

function stepKeyOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const keys = (body as { user_api_keys?: unknown }).user_api_keys;
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) return undefined;
  const key = (keys as { llmKey?: unknown }).llmKey;
  // Anything but a string is for the schema check to refuse.
  return typeof key === 'string' ? key : undefined;
}

/**
 * `value` with `key` replaced in every string and property name. Iterative, not recursive: a body
 * is as deep as JSON.parse allowed (a tool's observation may nest thousands of levels), and the
 * schema check after this reports what is wrong with it.
 */
function withoutKey(value: unknown, key: string): unknown {
  const replace = (text: string) => (text.includes(key) ? text.split(key).join(REDACTED) : text);
  const root: { value: unknown } = { value };
  const stack: { holder: Record<string, unknown> | unknown[]; slot: string | number }[] = [{ holder: root as Record<string, unknown>, slot: 'value' }];
  while (stack.length > 0) {
    const { holder, slot } = stack.pop() as (typeof stack)[number];
    const current = (holder as Record<string | number, unknown>)[slot];
    if (typeof current === 'string') {
      (holder as Record<string | number, unknown>)[slot] = replace(current);
    } else if (Array.isArray(current)) {
      const copy = [...current];
      (holder as Record<string | number, unknown>)[slot] = copy;
      for (let i = 0; i < copy.length; i += 1) stack.push({ holder: copy, slot: i });
    } else if (typeof current === 'object' && current !== null) {
      const copy: Record<string, unknown> = {};
      // Defined, not assigned: a "__proto__" that JSON.parse made an own property stays one.
      for (const [name, inner] of Object.entries(current)) Object.defineProperty(copy, replace(name), { value: inner, enumerable: true, writable: true, configurable: true });
      (holder as Record<string | number, unknown>)[slot] = copy;
      for (const name of Object.keys(copy)) stack.push({ holder: copy, slot: name });
    }
  }
  return root.value;
}
