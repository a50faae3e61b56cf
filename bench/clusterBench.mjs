// What the distributed benches (load.mjs, takeover.mjs) share: `redflow worker` processes on a
// prefix of their own, every run's log read back from the trace stream in one pass, and the prefix
// removed afterwards.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Storage } from '../dist/actors/subjects.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts `redflow worker <flowPath> --role <roles>` on `prefix` and resolves once it is ready.
 * `nodeArgs` go to Node, `args` to the worker, `env` to its environment.
 */
export function startWorker({ flowPath, roles, url, prefix, nodeArgs = [], args = [], env = {}, onReady }) {
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin/redflow.js'), 'worker', flowPath, '--role', roles, '--nats', url, '--prefix', prefix, ...args], {
    env: { ...process.env, NO_COLOR: '1', SLOW_BUMP_MS: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const listen = (chunk) => {
      stderr += chunk;
      if (!stderr.includes('worker ready')) return;
      onReady?.(child);
      // Its log lines are read and dropped from now on (a pipe nobody reads would stop the worker).
      child.stderr.off('data', listen);
      child.stderr.resume();
      resolve(child);
    };
    child.stderr.on('data', listen);
    child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}): ${stderr}`)));
  });
}

/**
 * Every run's events as `prefix`'s trace stream holds them, by trace id, read with one ordered
 * consumer (rather than one per run).
 */
export async function readAllRuns(nc, prefix) {
  const consumer = await jetstream(nc).consumers.get(Storage.traceStream(prefix));
  const logs = new Map();
  const decoder = new TextDecoder();
  for (let more = true; more; ) {
    const batch = await consumer.fetch({ max_messages: 10_000, expires: 5000 });
    let got = 0;
    for await (const message of batch) {
      got += 1;
      // A message holds one event, or several recorded together (a JSON array).
      const value = JSON.parse(decoder.decode(message.data));
      for (const event of Array.isArray(value) ? value : [value]) {
        const log = logs.get(event.traceId);
        if (log === undefined) logs.set(event.traceId, [event]);
        else log.push(event);
      }
      if (message.info.pending === 0) more = false;
    }
    if (got === 0) more = false;
  }
  await consumer.delete().catch(() => undefined);
  return logs;
}

/** Stops the worker processes (SIGTERM, then SIGKILL after 5 s) and removes `prefix`'s stream and buckets. */
export async function removeCluster(nc, prefix, children) {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 5000);
          child.once('exit', () => resolve(clearTimeout(force)));
        }),
    ),
  );
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  const kvm = new Kvm(nc);
  for (const bucket of [Storage.runsBucket(prefix), Storage.leasesBucket(prefix), Storage.toolResultsBucket(prefix), Storage.memoryBucket(prefix)]) {
    await (await kvm.open(bucket).catch(() => undefined))?.destroy().catch(() => undefined);
  }
}

/**
 * The heap a worker started with the heap probe (`heapProbeArgs`) holds after a full collection:
 * V8's heap in use plus the memory outside it (buffers), in bytes.
 */
export function heapInUse(child) {
  return new Promise((resolve, reject) => {
    let text = '';
    const listen = (chunk) => {
      text += chunk;
      const found = /heap-in-use (\d+)/.exec(text);
      if (!found) return;
      child.stderr.off('data', listen);
      clearTimeout(timer);
      resolve(Number(found[1]));
    };
    const timer = setTimeout(() => reject(new Error('the worker did not report its heap')), 10_000);
    child.stderr.on('data', listen);
    child.kill('SIGUSR2');
  });
}

/** Node options that load the heap probe into a worker (see fixtures/heapProbe.cjs). */
export const heapProbeArgs = ['--expose-gc', '--require', path.join(ROOT, 'bench/fixtures/heapProbe.cjs')];
