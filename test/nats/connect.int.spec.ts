import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { connectNats, natsConnectionOptions } from '../../src/nats/connect.js';
import { NATS_URL, freePort, startServerWithConfig, type PrivateNatsServer } from './natsSupport.js';

const user = nkeys.createUser();
const seed = new TextDecoder().decode(user.getSeed());

describe('connectNats', () => {
  it('should connect to the test server', async () => {
    const nc = await connectNats({ servers: NATS_URL, timeoutMs: 2000 });
    expect(nc.info?.jetstream).toBe(true);
    await nc.drain();
  });

  it('should say how to start a server when none answers', async () => {
    const port = await freePort();
    const failure = await connectNats({ servers: `127.0.0.1:${port}`, timeoutMs: 1000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RedflowError);
    expect(failure).toMatchObject({ code: ErrorCode.TRANSPORT_CONNECT_FAILED, hint: expect.stringContaining(`is nats-server running at 127.0.0.1:${port}?`) });
  });

  it('should refuse contradictory credentials and an unreadable creds file before connecting', async () => {
    await expect(natsConnectionOptions({ servers: NATS_URL, token: 't', user: 'u', pass: 'p' })).rejects.toMatchObject({
      code: ErrorCode.TRANSPORT_CONNECT_FAILED,
      message: expect.stringContaining('user/pass, token'),
    });
    await expect(natsConnectionOptions({ servers: NATS_URL, pass: 'p' })).rejects.toMatchObject({ code: ErrorCode.TRANSPORT_CONNECT_FAILED });
    await expect(natsConnectionOptions({ servers: NATS_URL, credsFile: '/nonexistent/redflow.creds' })).rejects.toMatchObject({
      code: ErrorCode.TRANSPORT_CONNECT_FAILED,
      message: expect.stringContaining('/nonexistent/redflow.creds'),
    });
  });

  it('should sign with the nkey of a creds file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-creds-'));
    try {
      const file = path.join(dir, 'user.creds');
      // The JWT is not checked on this side; the server checks it.
      await writeFile(
        file,
        `-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.c2ln\n------END NATS USER JWT------\n\n` +
          `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
      );
      const options = await natsConnectionOptions({ servers: NATS_URL, credsFile: file });
      const authenticator = options.authenticator;
      if (typeof authenticator !== 'function') throw new Error('expected one authenticator');
      const nonce = 'abc123';
      const auth = authenticator(nonce) as { jwt: string; nkey: string; sig: string };
      expect(auth.jwt).toBe('eyJ0eXAiOiJKV1QifQ.e30.c2ln');
      expect(auth.nkey).toBe(user.getPublicKey());
      expect(user.verify(new TextEncoder().encode(nonce), Buffer.from(auth.sig, 'base64url'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('against servers that require authentication', () => {
    let dir: string;
    let users: PrivateNatsServer;
    let tokens: PrivateNatsServer;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'redflow-nats-auth-'));
      [users, tokens] = await Promise.all([
        startServerWithConfig(dir, 'users', `authorization { users = [ { user: "alice", password: "s3cret" }, { nkey: "${user.getPublicKey()}" } ] }`),
        startServerWithConfig(dir, 'token', 'authorization { token: "t0ken" }'),
      ]);
    });

    afterAll(async () => {
      await Promise.all([users, tokens].map((server) => server?.stop()));
      await rm(dir, { recursive: true, force: true });
    });

    it('should authenticate with a user and password, a token and an nkey seed', async () => {
      for (const nc of [
        await connectNats({ servers: users.url, user: 'alice', pass: 's3cret' }),
        await connectNats({ servers: users.url, nkeySeed: seed }),
        await connectNats({ servers: tokens.url, token: 't0ken' }),
      ]) {
        // A round trip to the server, which only an authenticated connection makes.
        expect(await nc.rtt()).toBeGreaterThanOrEqual(0);
        await nc.close();
        expect(nc.isClosed()).toBe(true);
      }
    });

    it('should report refused credentials without leaking them', async () => {
      const wrongPassword = await connectNats({ servers: users.url, user: 'alice', pass: 'wrong-pass' }).catch((error: unknown) => error);
      const wrongToken = await connectNats({ servers: tokens.url, token: 'wrong-token' }).catch((error: unknown) => error);
      for (const failure of [wrongPassword, wrongToken]) {
        expect(failure).toMatchObject({ code: ErrorCode.TRANSPORT_CONNECT_FAILED, hint: expect.stringContaining('check the user/pass') });
        expect(JSON.stringify((failure as RedflowError).toInfo())).not.toMatch(/wrong-(pass|token)/);
      }
    });
  });
});
