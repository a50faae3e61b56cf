import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, createSecretRegistry } from '../../src/secrets/secrets.js';

const KEY = 'sk-live-0123456789abcdef';

describe('the secret registry', () => {
  it('should replace every occurrence of a registered value, also as JSON text and URL-encoded', () => {
    const secrets = createSecretRegistry();
    const quoted = 'pa"ss\\word-42';
    secrets.add(KEY);
    secrets.add(quoted);
    expect(secrets.redact(`key ${KEY}, again ${KEY}.`)).toBe(`key ${REDACTED}, again ${REDACTED}.`);
    expect(secrets.redact(JSON.stringify({ password: quoted }))).toBe(`{"password":"${REDACTED}"}`);
    expect(secrets.redact(`https://x.test/?p=${encodeURIComponent(quoted)}`)).toBe(`https://x.test/?p=${REDACTED}`);
  });

  it('should cut a secret that contains another one whole', () => {
    const secrets = createSecretRegistry();
    secrets.add('abcdefgh');
    secrets.add('abcdefgh-ijklmnop');
    expect(secrets.redact('x abcdefgh-ijklmnop y abcdefgh')).toBe(`x ${REDACTED} y ${REDACTED}`);
  });

  it('should leave short values and values without a letter alone, so words and numbers survive', () => {
    const secrets = createSecretRegistry();
    secrets.add('ollama');
    secrets.add('12345678901');
    secrets.add('');
    secrets.add(undefined);
    expect(secrets.size).toBe(0);
    expect(secrets.redact('ollama answered at 12345678901')).toBe('ollama answered at 12345678901');
  });

  it('should take secret-looking variables and URL passwords from an environment, and nothing else', () => {
    const secrets = createSecretRegistry();
    secrets.addEnv({
      OPENAI_API_KEY: 'sk-from-env-0001',
      PGPASSWORD: 'pg-password-0002',
      GITHUB_TOKEN: 'ghp_token_0003',
      MY_SERVICE_SECRET: 'shh-secret-0004',
      DATABASE_URL: 'postgres://app:url-pass-0005@db:5432/app',
      PWD: '/home/someone/project',
      HOME: '/home/someone',
      SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
      API_KEY_FILE: 'keys/service-account.json',
      GIT_AUTHOR_NAME: 'Someone Longname',
      SESSION_NOTE: 'two words here',
      LANG: 'en_US.UTF-8',
    });
    const text =
      'sk-from-env-0001 pg-password-0002 ghp_token_0003 shh-secret-0004 url-pass-0005 /home/someone/project ' +
      '/tmp/ssh-agent.sock keys/service-account.json Someone Longname two words here en_US.UTF-8';
    expect(secrets.redact(text)).toBe(
      `${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} /home/someone/project ` +
        '/tmp/ssh-agent.sock keys/service-account.json Someone Longname two words here en_US.UTF-8',
    );
  });

  it('should return data untouched (the same object) when no secret is in it', () => {
    const secrets = createSecretRegistry();
    secrets.add(KEY);
    const data = { rows: [{ id: 'A-1', note: 'fine' }], count: 1 };
    expect(secrets.redactData(data)).toBe(data);
  });

  it('should redact strings and keys of data into a copy, keeping "__proto__" a plain key', () => {
    const secrets = createSecretRegistry();
    secrets.add(KEY);
    const data = JSON.parse(`{"headers":{"authorization":"Bearer ${KEY}"},"${KEY}":1,"__proto__":{"k":"${KEY}"},"n":[null,true,2]}`) as unknown;
    const redacted = secrets.redactData(data) as Record<string, unknown>;
    expect(JSON.stringify(redacted)).toBe(
      `{"headers":{"authorization":"Bearer ${REDACTED}"},"${REDACTED}":1,"__proto__":{"k":"${REDACTED}"},"n":[null,true,2]}`,
    );
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(JSON.stringify(data)).toContain(KEY);
  });

  it('should redact data nested 100,000 levels deep without overflowing the stack', () => {
    const secrets = createSecretRegistry();
    secrets.add(KEY);
    let deep: unknown = KEY;
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { d: deep };
    let node = secrets.redactData(deep);
    for (let i = 99_999; i >= 0; i--) node = i % 2 === 0 ? (node as unknown[])[0] : (node as { d: unknown }).d;
    expect(node).toBe(REDACTED);
  });

  it('should redact JSON text exactly as it redacts the data (the text stays JSON)', () => {
    const secrets = createSecretRegistry();
    const registered = ['sk-"quoted"-secret', 'line\nbreak-secret', 'plain-secret-value', 'ünïcødé-sécret'];
    for (const value of registered) secrets.add(value);
    const text = fc.oneof(fc.string(), fc.constantFrom(...registered), fc.constantFrom(...registered).map((s) => `pre ${s} post`));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value')), fc.dictionary(text, tie('value'))),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const fromText = JSON.parse(secrets.redact(JSON.stringify(value))) as unknown;
        expect(fromText).toEqual(JSON.parse(JSON.stringify(secrets.redactData(value))));
        for (const secret of registered) expect(JSON.stringify(fromText)).not.toContain(JSON.stringify(secret).slice(1, -1));
      }),
      { numRuns: 300 },
    );
  });

  it('should redact a held secret until it is released, then forget it', () => {
    const secrets = createSecretRegistry();
    const release = secrets.hold('user-key-"held"-0001');
    expect(secrets.redact('a user-key-"held"-0001 b')).toBe(`a ${REDACTED} b`);
    expect(secrets.redact(JSON.stringify({ k: 'user-key-"held"-0001' }))).toBe(`{"k":"${REDACTED}"}`);
    release();
    release();
    expect(secrets.size).toBe(0);
    expect(secrets.redact('a user-key-"held"-0001 b')).toBe('a user-key-"held"-0001 b');
  });

  it('should keep a held secret while another holder has it, and for good once it was added', () => {
    const secrets = createSecretRegistry();
    const first = secrets.hold(KEY);
    const second = secrets.hold(KEY);
    first();
    expect(secrets.redact(KEY)).toBe(REDACTED);
    second();
    expect(secrets.redact(KEY)).toBe(KEY);
    secrets.add(KEY);
    secrets.hold(KEY)();
    expect(secrets.redact(KEY)).toBe(REDACTED);
    const other = secrets.hold('other-secret-0002');
    other();
    expect(secrets.redact(`${KEY} other-secret-0002`)).toBe(`${REDACTED} other-secret-0002`);
  });
});
