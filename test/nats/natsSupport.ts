import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../src/nats/connect.js';

/** The server the NATS integration tests use (CI starts it the same way). */
export const NATS_URL = process.env.NATS_URL ?? '127.0.0.1:4222';

/** Opens a connection to the test server, or fails saying how to start one. */
export async function connectTestServer(name: string): Promise<NatsConnection> {
  try {
    return await connectNats({ servers: NATS_URL, name, timeoutMs: 2000 });
  } catch (error) {
    throw new Error(
      `The NATS integration tests need nats-server with JetStream at ${NATS_URL}. ` +
        'Start it with `nats-server -js -a 127.0.0.1 -p 4222` (or point NATS_URL at another server). ' +
        `Connecting failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** A subject prefix no other test (or test run) uses. */
export function uniquePrefix(): string {
  return `rftest.${randomBytes(6).toString('hex')}`;
}

/** Resolves once `check()` is true; fails after `ms`. */
export async function eventually(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The binary the tests that need their own server start (CI installs nats-server as for the shared one). */
export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? 'nats-server';

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** A nats-server started by a test. */
export interface PrivateNatsServer {
  /** `127.0.0.1:<port>`. */
  readonly url: string;
  readonly process: ChildProcess;
  /** Stops the server and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts a private nats-server with the config file `configFile` on 127.0.0.1 and a free port
 * (given as flags, so they override the file's `port`/`listen`), and resolves once it listens.
 * `env` is added to the environment (for the `$VAR` references of the file).
 */
export async function startNatsServer(configFile: string, env: Record<string, string> = {}, fixedPort?: number): Promise<PrivateNatsServer> {
  const port = fixedPort ?? (await freePort());
  const child = spawn(NATS_SERVER_BIN, ['-c', configFile, '-a', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill();
      reject(new Error(message));
    };
    const timer = setTimeout(() => fail(`${NATS_SERVER_BIN} did not start: ${output}`), 5000);
    child.once('error', (error) => {
      fail(`these tests start their own nats-server; install it or set NATS_SERVER_BIN (${error.message})`);
    });
    child.once('exit', (code) => fail(`${NATS_SERVER_BIN} -c ${configFile} exited with code ${String(code)}: ${output}`));
    child.stderr?.on('data', (chunk: Buffer) => {
      if (settled) return;
      output += chunk.toString();
      if (!settled && output.includes('Server is ready')) {
        settled = true;
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `127.0.0.1:${port}`,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    },
  };
}

/** Writes `config` to `<dir>/<name>.conf` and starts a private nats-server with it. */
export async function startServerWithConfig(dir: string, name: string, config: string): Promise<PrivateNatsServer> {
  const file = path.join(dir, `${name}.conf`);
  await writeFile(file, `${config}\n`);
  return startNatsServer(file);
}
