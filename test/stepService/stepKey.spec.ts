import { describe, expect, it } from 'vitest';
import { ApiError, ErrorCode } from '../../src/errors.js';
import { REDACTED, redactSecrets } from '../../src/secrets/secrets.js';
import { withSecretScope } from '../../src/secrets/secretScope.js';
import { holdStepKey } from '../../src/stepService/stepKey.js';
import { thrown } from '../support/thrown.js';

const KEY = 'sk-step-key-4b1d9e7a';

describe('holdStepKey', () => {
  it('leaves the key in user_api_keys.llmKey only, and makes it a secret of the request\'s scope, not of the process', async () => {
    const body = { session_id: KEY, user_query: `key ${KEY} twice ${KEY}`, llm_config: { modelName: KEY }, user_api_keys: { llmKey: KEY, [KEY]: 1 } };
    let later: Promise<string> | undefined;
    withSecretScope(() => {
      const held = holdStepKey(body);
      expect(held.body).toEqual({
        session_id: REDACTED,
        user_query: `key ${REDACTED} twice ${REDACTED}`,
        llm_config: { modelName: REDACTED },
        user_api_keys: { llmKey: KEY, [REDACTED]: 1 },
      });
      expect(redactSecrets(`x ${KEY}`)).toBe(`x ${REDACTED}`);
      // What the request goes on to do asynchronously stays in its scope.
      later = new Promise((resolve) => setTimeout(() => resolve(redactSecrets(`y ${KEY}`)), 1));
    });
    expect(body.user_query).toContain(KEY);
    // Outside the request (another request, the process), the key is an ordinary string.
    expect(redactSecrets(`x ${KEY}`)).toBe(`x ${KEY}`);
    expect(await later).toBe(`y ${REDACTED}`);
  });

  it('refuses a key that cannot be a provider\'s with 400 HTTP_BODY_INVALID naming the field, never quoting it', () => {
    for (const key of ['abc', 'sk-short-1234567', `sk-with space-${'x'.repeat(20)}`, `sk-line\nbreak-${'x'.repeat(20)}`, `sk-tab\t${'x'.repeat(20)}`, `sk-nul\u0000${'x'.repeat(20)}`, '1234567890123456789012345', `sk-${'x'.repeat(1000)}`, ' '.repeat(25)]) {
      const failure = thrown(() => holdStepKey({ user_query: 'q', user_api_keys: { llmKey: key } }));
      expect(failure, JSON.stringify(key)).toBeInstanceOf(ApiError);
      const error = failure as ApiError;
      expect(error.code).toBe(ErrorCode.HTTP_BODY_INVALID);
      expect(error.toInfo().path).toBe('/user_api_keys/llmKey');
      expect(error.extra.fields?.map((field) => field.path)).toEqual(['/user_api_keys/llmKey']);
      expect(error.message).toContain('user_api_keys.llmKey');
      // What a message could quote of the key (an all-blank key has nothing to quote).
      const quotable = key.trim().length >= 3 ? key.trim().slice(0, 12) : undefined;
      const shown = JSON.stringify({ message: error.message, hint: error.hint, fields: error.extra.fields });
      expect(quotable !== undefined && shown.includes(quotable), `${shown} quotes ${JSON.stringify(key)}`).toBe(false);
    }
  });

  it('goes through a body as deep as JSON.parse takes, and keeps a "__proto__" an own property', () => {
    const depth = 50_000;
    const body = JSON.parse(`{"user_api_keys":{"llmKey":"${KEY}"},"__proto__":{"a":"${KEY}"},"deep":${'['.repeat(depth)}"${KEY}"${']'.repeat(depth)}}`) as unknown;
    const held = holdStepKey(body);
    const redacted = held.body as { deep: unknown; user_api_keys: unknown };
    let bottom = redacted.deep;
    for (let level = 0; level < depth; level += 1) bottom = (bottom as unknown[])[0];
    expect(bottom).toBe(REDACTED);
    expect(redacted.user_api_keys).toEqual({ llmKey: KEY });
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(redacted, '__proto__')?.value).toEqual({ a: REDACTED });
  });

  it('leaves a body alone when it has no key, or one that is not a string (for the schema check to refuse)', () => {
    const none = { user_query: KEY, user_api_keys: {} };
    expect(holdStepKey(none).body).toBe(none);
    const numeric = { user_query: KEY, user_api_keys: { llmKey: 42 } };
    expect(holdStepKey(numeric).body).toBe(numeric);
    expect(holdStepKey([KEY]).body).toEqual([KEY]);
  });

  it('takes a key of any length for a model served on this machine, and keeps the remote providers\' rules for the others', () => {
    const body = (llmKey: string, modelName: string) => ({ user_query: 'Is ollama up? token-abc123', llm_config: { modelName }, user_api_keys: { llmKey } });
    const rules = { servesLocally: (name: string) => name === 'llama-local' };
    withSecretScope(() => {
      // As short as a word: used, and not cut out of the user's own text.
      expect(holdStepKey(body('ollama', 'llama-local'), rules).body).toEqual(body('ollama', 'llama-local'));
      expect(holdStepKey(body('12345', 'llama-local'), rules).body).toEqual(body('12345', 'llama-local'));
      // Long enough to be a secret: redacted, as any key.
      expect((holdStepKey(body('token-abc123', 'llama-local'), rules).body as { user_query: string }).user_query).toBe(`Is ollama up? ${REDACTED}`);
      expect(redactSecrets('token-abc123')).toBe(REDACTED);
    });
    for (const [key, model] of [['ollama', 'gpt-4o'], ['oll ama', 'llama-local'], ['', 'llama-local']] as const) {
      expect(() => holdStepKey(body(key, model), rules), `${key} for ${model}`).toThrow(ApiError);
    }
  });
});
