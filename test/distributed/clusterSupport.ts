import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Storage } from '../../src/actors/subjects.js';
import { afterAll } from 'vitest';
import { NATS_URL, connectTestServer } from '../nats/natsSupport.js';

// Helpers for the distributed tests: real `redflow worker` processes (npm test builds dist/
// first), and removing what a test's prefix left on the server.
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/redflow.js');

/**
 * Starts `redflow worker <flow> --role <roles> …` and resolves once it says it is ready. It connects
 * to `options.nats` (default: the shared test server).
 */
export function startWorkerProcess(
  flowPath: string,
  roles: string,
  options: { prefix: string; env?: Record<string, string>; extraArgs?: string[]; nats?: string },
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [BIN, 'worker', flowPath, '--role', roles, '--nats', options.nats ?? NATS_URL, '--prefix', options.prefix, ...(options.extraArgs ?? [])],
    { env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('worker ready')) resolve(child);
    });
    child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}) before it was ready: ${stderr}`)));
  });
}

/** Resolves with the signal or exit code once the process has ended. */
export function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode ?? child.exitCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

/** Deletes the trace stream and the KV buckets of a test's prefix. */
export async function removePrefix(nc: NatsConnection, prefix: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  const kvm = new Kvm(nc);
  for (const bucket of [
    Storage.runsBucket(prefix),
    Storage.leasesBucket(prefix),
    Storage.toolResultsBucket(prefix),
    Storage.memoryBucket(prefix),
  ]) {
    await (await kvm.open(bucket).catch(() => undefined))?.destroy().catch(() => undefined);
  }
}

/**
 * What a test file opens and closes after its last test, the last opened first: `closers` takes any
 * closing (unshift one to run it after the connections are drained), `connection` opens a NATS
 * connection to the test server, drained then.
 */
export function closedAfterAll(): { closers: (() => Promise<unknown>)[]; connection(name: string): Promise<NatsConnection> } {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  });
  return {
    closers,
    async connection(name) {
      const nc = await connectTestServer(name);
      closers.push(() => nc.drain());
      return nc;
    },
  };
}

/**
 * Stops a test's worker processes (SIGTERM, waited for), removes its prefix's streams and buckets,
 * drains its connection and removes its folder.
 *
 * @example
 * ```ts
 * afterAll(() => stopCluster({ workers, nc, prefix, dir }));
 * ```
 */
export async function stopCluster({ workers, nc, prefix, dir }: { workers: readonly ChildProcess[]; nc: NatsConnection; prefix: string; dir: string }): Promise<void> {
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((worker) => exited(worker)));
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
}
