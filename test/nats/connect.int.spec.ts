import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { connectNats, natsConnectionOptions } from '../../src/actors/nats/connect.js';
import { NATS_URL } from './natsSupport.js';

const user = nkeys.createUser();
const seed = new TextDecoder().decode(user.getSeed());

/** The binary the auth tests start (CI installs nats-server as for the shared server). */
const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? 'nats-server';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** Starts a private nats-server with `config` and resolves with its address once it listens. */
async function startServer(dir: string, name: string, config: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const file = path.join(dir, `${name}.conf`);
  await writeFile(file, `listen: "127.0.0.1:${port}"\n${config}\n`);
  const child = spawn(NATS_SERVER_BIN, ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${NATS_SERVER_BIN} did not start: ${output}`)), 5000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`the auth tests start their own nats-server; install it or set NATS_SERVER_BIN (${error.message})`));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { url: `127.0.0.1:${port}`, process: child };
}

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
    let users: { url: string; process: ChildProcess };
    let tokens: { url: string; process: ChildProcess };

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'redflow-nats-auth-'));
      [users, tokens] = await Promise.all([
        startServer(dir, 'users', `authorization { users = [ { user: "alice", password: "s3cret" }, { nkey: "${user.getPublicKey()}" } ] }`),
        startServer(dir, 'token', 'authorization { token: "t0ken" }'),
      ]);
    });

    afterAll(async () => {
      for (const server of [users, tokens]) server?.process.kill();
      await rm(dir, { recursive: true, force: true });
    });

    it('should authenticate with a user and password, a token and an nkey seed', async () => {
      for (const nc of [
        await connectNats({ servers: users.url, user: 'alice', pass: 's3cret' }),
        await connectNats({ servers: users.url, nkeySeed: seed }),
        await connectNats({ servers: tokens.url, token: 't0ken' }),
      ]) {
        await nc.flush();
        await nc.close();
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
