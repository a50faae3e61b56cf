import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../src/actors/nats/connect.js';

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
