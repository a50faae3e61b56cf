// Issue 3: "SIGKILL a tool worker mid-call: the call is retried with the same key and its effect
// happens once." Real processes (test/fixtures/toolWorker/worker.ts, run through tsx) against the
// real nats-server (NATS_URL, default 127.0.0.1:4222); this file's KV bucket is deleted in afterAll.
//
// What "once" can and cannot guarantee. serveIdempotentTool claims the key (a lease in JetStream
// KV), executes, then stores the result; a repeat of the key is answered from the store. A worker
// killed *before* its effect leaves only a lease: when it runs out, the next worker executes the
// call, so the effect happens once. A worker killed *after* its effect but *before* the result was
// stored leaves the same lease, and the next worker executes the call again: no store can tell that
// the effect already happened, so that window is the tool's to close. The fixture's effect is
// idempotent by key ("append the key unless the file has it"), as any tool with external effects
// must be (an idempotency key on the API it calls, a unique constraint, "insert if absent"). The two
// calls below cover both windows; without the fixture's check, the second would append twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import type { ToolRequest, ToolResult } from '../../src/actors/tool.js';
import { createNatsKvToolResultStore } from '../../src/nats/kv/natsKvToolResultStore.js';
import { toolResultKey, type ToolResultStore } from '../../src/actors/toolResults/toolResultStore.js';
import type { Transport } from '../../src/actors/transport.js';
import { NATS_URL, connectTestServer, uniquePrefix } from './natsSupport.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/toolWorker/worker.ts', import.meta.url));
const BUCKET = `redflow-test-tool-worker-${randomBytes(4).toString('hex')}`;
const SUBJECT = `${uniquePrefix()}.tool.effect`;
/** Short, so the second worker takes the dead one's calls over quickly. */
const LEASE_MS = 800;

interface Worker {
  readonly child: ChildProcess;
  /** Lines the worker printed so far. */
  readonly lines: string[];
  waitFor(line: string, ms?: number): Promise<void>;
}

let nc: NatsConnection;
let store: ToolResultStore;
let core: Transport;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  nc = await connectTestServer('redflow-test-tool-worker-core');
  store = await createNatsKvToolResultStore(nc, { bucket: BUCKET });
  core = createNatsTransport(nc, { log: () => undefined });
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-tool-worker-'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await core?.close();
  if (nc !== undefined) await (await new Kvm(nc).open(BUCKET)).destroy().catch(() => undefined);
  await nc?.drain();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Starts a worker process and resolves once it serves. */
async function startWorker(owner: string, effectFile: string): Promise<Worker> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: ROOT,
    env: { ...process.env, NATS_URL, SUBJECT, BUCKET, EFFECT_FILE: effectFile, LEASE_MS: String(LEASE_MS), OWNER: owner },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  let stderr = '';
  let partial = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const waitFor = (line: string, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + ms;
      const check = () => {
        if (lines.includes(line)) resolve();
        else if (child.exitCode !== null || child.signalCode !== null) reject(new Error(`worker ${owner} exited before "${line}": ${stderr}`));
        else if (Date.now() > deadline) reject(new Error(`worker ${owner} printed no "${line}" within ${ms} ms: ${stderr}`));
        else setTimeout(check, 5);
      };
      check();
    });
  await waitFor('ready');
  return { child, lines, waitFor };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const request = (key: string, input: Record<string, unknown> = {}): ToolRequest => ({
  traceId: key.split(':')[0] ?? '',
  iteration: Number(key.split(':')[1]),
  tool: 'effect',
  input,
  idempotencyKey: key,
});

const ask = (key: string, input: Record<string, unknown> = {}, timeoutMs = 10_000) =>
  core.request<ToolRequest, ToolResult>(SUBJECT, request(key, input), { timeoutMs });

async function effects(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
}

describe('a tool worker killed mid-call', () => {
  it('should have the call retried with the same key by another worker, its effect happening once', async () => {
    const effectFile = path.join(dir, 'effects.txt');
    const trace = `trace-${randomBytes(4).toString('hex')}`;
    const beforeEffect = `${trace}:1`; // killed before its effect
    const afterEffect = `${trace}:2`; // killed after its effect, before its result was stored

    const first = await startWorker('worker-1', effectFile);
    // These requests are lost with the worker (their requester would time out and re-send).
    void ask(beforeEffect, {}, 3000);
    void ask(afterEffect, { effectFirst: true }, 3000);
    await first.waitFor(`started ${beforeEffect}`);
    await first.waitFor(`started ${afterEffect}`);
    first.child.kill('SIGKILL');
    await exited(first.child);
    expect(await effects(effectFile)).toEqual([afterEffect]);
    expect(await store.get(toolResultKey('effect', beforeEffect))).toBeUndefined();
    expect(await store.get(toolResultKey('effect', afterEffect))).toBeUndefined();

    // The re-sent calls: the second worker waits out the dead worker's lease, then executes them.
    const second = await startWorker('worker-2', effectFile);
    const replies = await Promise.all([ask(beforeEffect), ask(afterEffect, { effectFirst: true })]);
    expect(replies).toEqual([
      { ok: true, data: { ok: true, output: { key: beforeEffect, worker: 'worker-2' } } },
      { ok: true, data: { ok: true, output: { key: afterEffect, worker: 'worker-2' } } },
    ]);
    expect((await effects(effectFile)).sort()).toEqual([beforeEffect, afterEffect].sort());
    expect(second.lines.filter((line) => line.startsWith('started '))).toEqual(
      expect.arrayContaining([`started ${beforeEffect}`, `started ${afterEffect}`]),
    );

    // Once stored, a repeat is answered from the store: nothing runs again.
    const startedSoFar = second.lines.filter((line) => line.startsWith('started ')).length;
    expect(startedSoFar).toBe(2);
    expect(await ask(beforeEffect)).toEqual(replies[0]);
    expect(second.lines.filter((line) => line.startsWith('started '))).toHaveLength(2);
    expect((await effects(effectFile)).sort()).toEqual([beforeEffect, afterEffect].sort());

    second.child.kill('SIGTERM');
    await exited(second.child);
  });
});
