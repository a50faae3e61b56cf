import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { MIN_SECRET_CHARS, REDACTED } from '../secrets/secrets.js';
import { addScopedSecret } from '../secrets/secretScope.js';

/** Shortest `llmKey` taken: providers' keys are far longer, and a short one would match ordinary words. */
export const MIN_STEP_KEY_CHARS = 20;

/** Longest `llmKey` taken, as the request schema says. */
const MAX_STEP_KEY_CHARS = 1000;

/** What a provider's key is made of: printable ASCII, no spaces, at least one letter. */
const KEY_SHAPE = /^(?=.*[A-Za-z])[!-~]+$/;

/** What a local server's key is made of: printable ASCII, no spaces (vLLM's `--api-key` is any token). */
const LOCAL_KEY_SHAPE = /^[!-~]+$/;

/** How a step's key is judged. */
export interface StepKeyRules {
  /**
   * True when the model named so (the body's `llm_config.modelName`) is served on this machine
   * (`StepService.servesLocally`). Its key may be of any length: see {@link holdStepKey}.
   */
  readonly servesLocally?: (modelName: string) => boolean;
}

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
 * A model served on this machine (`rules.servesLocally`: Ollama, vLLM, llama.cpp at a loopback
 * address) takes a key of any length, printable ASCII without spaces: such servers take a key
 * their operator chose (`ollama`, a short `--api-key`), and refusing it left a user of a local
 * server no way to send one. The other rules keep their reason for every remote provider: a key
 * that cannot be a provider's is a mistake (or a probe) and is refused before any call. A local
 * key as short as an ordinary word (under 8 characters, or without a letter) is used for the
 * model's calls and kept out of every record like any key, but is not searched for in the body's
 * text or redacted from the answer: it would cut that word out of the user's own question and
 * answer (the secret registry ignores such values for the same reason).
 *
 * @throws ApiError 400 `HTTP_BODY_INVALID` (path `/user_api_keys/llmKey`) for a key that cannot
 *   be a provider's: shorter than {@link MIN_STEP_KEY_CHARS} (unless the model is served locally)
 *   or longer than 1000 characters, with spaces, control or non-ASCII characters, or without a
 *   letter (unless local). The error never quotes the key.
 * @example
 * ```ts
 * const body = await readJsonBody(req, { maxBytes });
 * const request = parseReactStepRequest(holdStepKey(body, { servesLocally: (name) => steps.servesLocally(name) }).body);
 * ```
 */
export function holdStepKey(body: unknown, rules: StepKeyRules = {}): HeldStepKey {
  const key = stepKeyOf(body);
  if (key === undefined) return { body };
  const local = rules.servesLocally?.(modelNameOf(body)) === true;
  if (local ? key.length > MAX_STEP_KEY_CHARS || !LOCAL_KEY_SHAPE.test(key) : key.length < MIN_STEP_KEY_CHARS || key.length > MAX_STEP_KEY_CHARS || !KEY_SHAPE.test(key)) {
    throw keyRefused(key, local);
  }
  if (key.length < MIN_SECRET_CHARS || !/[A-Za-z]/.test(key)) return { body };
  addScopedSecret(key);
  const redacted = withoutKey(body, key) as Record<string, unknown>;
  // The one place the key stays: where the step service takes it for the model's calls.
  return { body: { ...redacted, user_api_keys: { ...(redacted.user_api_keys as object), llmKey: key } } };
}

/** The model the body names, before the schema check: '' when it names none. */
function modelNameOf(body: unknown): string {
  const config = (body as { llm_config?: unknown }).llm_config;
  const name = typeof config === 'object' && config !== null ? (config as { modelName?: unknown }).modelName : undefined;
  return typeof name === 'string' ? name : '';
}

/** The 400 for a key that cannot be a provider's: says what is wrong with it, never what it is. */
function keyRefused(key: string, local: boolean): ApiError {
  const why =
    key === ''
      ? 'is empty'
      : !local && key.length < MIN_STEP_KEY_CHARS
      ? `is ${key.length} characters long, shorter than any provider's key (at least ${MIN_STEP_KEY_CHARS})`
      : key.length > MAX_STEP_KEY_CHARS
        ? `is longer than ${MAX_STEP_KEY_CHARS} characters`
        : /[^!-~]/.test(key)
          ? 'holds spaces, control or non-ASCII characters'
          : 'has no letter';
  const message = `user_api_keys.llmKey ${why}: it cannot be an API key`;
  const hint = `send the provider's API key as it is, without quotes, spaces or line breaks; leave llmKey out to use the server's key${local ? '' : ` (a model served on the server's machine, at a loopback address, takes a shorter key)`}`;
  return new ApiError(errorInfo(ErrorCode.HTTP_BODY_INVALID, message, { path: KEY_PATH, hint }), {
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
