// Tool results by idempotency key (issue 3: "tool workers keep completed results by key and answer a
// repeated key with the stored result instead of executing again"). One contract, run for the
// in-process store and for the NATS KV store against the real nats-server (NATS_URL, default
// 127.0.0.1:4222), then serveIdempotentTool over the NATS transport. The bucket is this file's own
// and is deleted in afterAll. The crash test with real processes is toolResults.process.int.spec.ts.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import type { ToolDefinition, ToolRequest, ToolResult } from '../../src/actors/tool.js';
import type { Reply, Transport } from '../../src/actors/transport.js';
import { createNatsKvToolResultStore, toolResultKvKey } from '../../src/nats/kv/natsKvToolResultStore.js';
import { serveIdempotentTool, type ServeIdempotentToolOptions } from '../../src/runtime/serveIdempotentTool.js';
import { createInProcessToolResultStore, toolResultKey, type ToolResultStore } from '../../src/actors/toolResults/toolResultStore.js';
import { connectTestServer, uniquePrefix } from './natsSupport.js';

const BUCKET = `redflow-test-tool-results-${randomBytes(4).toString('hex')}`;

let nc: NatsConnection;
let otherNc: NatsConnection;
let coreNc: NatsConnection;
/** Two handles on the test bucket, on two connections (two workers). */
let natsStore: ToolResultStore;
let otherNatsStore: ToolResultStore;

beforeAll(async () => {
  nc = await connectTestServer('redflow-test-tool-results');
  otherNc = await connectTestServer('redflow-test-tool-results-2');
  coreNc = await connectTestServer('redflow-test-tool-results-core');
  natsStore = await createNatsKvToolResultStore(nc, { bucket: BUCKET });
  otherNatsStore = await createNatsKvToolResultStore(otherNc, { bucket: BUCKET });
});

afterAll(async () => {
  if (nc !== undefined) await (await new Kvm(nc).open(BUCKET)).destroy().catch(() => undefined);
  await Promise.all([nc, otherNc, coreNc].map((connection) => connection?.drain()));
});

/** A key no other test uses: `<traceId>:<iteration>`. */
const newKey = (iteration = 1): string => `trace-${randomBytes(6).toString('hex')}:${iteration}`;

const success = (output: unknown): ToolResult => ({ ok: true, output });
const failed: ToolResult = {
  ok: false,
  error: { code: ErrorCode.TOOL_HTTP_STATUS, message: 'upstream said 503', hint: 'try later', retryable: true },
};

/**
 * The cases every {@link ToolResultStore} must pass. `handles()` gives two stores on one backend
 * (two workers); the tests use fresh keys, so a shared backend is fine.
 */
function describeToolResultStoreContract(name: string, handles: () => [ToolResultStore, ToolResultStore]): void {
  describe(name, () => {
    it('should let one owner claim an unknown key and tell every other claimer it is busy until it is completed', async () => {
      const [store, other] = handles();
      const key = newKey();
      const before = Date.now();
      const claim = await store.claim(key, 'worker-a#1', 5000);
      expect(claim).toMatchObject({ kind: 'claimed' });
      expect(claim.kind === 'claimed' && claim.until).toBeGreaterThanOrEqual(before + 5000);

      const busy = await other.claim(key, 'worker-b#1', 5000);
      expect(busy).toMatchObject({ kind: 'busy', owner: 'worker-a#1' });
      // Within the lease, allowing the server's clock a little slack against ours.
      expect(busy.kind === 'busy' && busy.until).toBeGreaterThan(before + 4000);
      expect(busy.kind === 'busy' && busy.until).toBeLessThan(Date.now() + 6000);
      // No re-entrance: the holder itself is told busy (an owner names one attempt).
      expect(await store.claim(key, 'worker-a#1', 5000)).toMatchObject({ kind: 'busy', owner: 'worker-a#1' });
      expect(await other.get(key)).toBeUndefined();

      const stored = await store.complete(key, 'worker-a#1', success({ n: 1 }));
      expect(stored).toMatchObject({ key, owner: 'worker-a#1', result: success({ n: 1 }) });
      expect(await other.claim(key, 'worker-b#2', 5000)).toEqual({ kind: 'stored', ...(await other.get(key)) });
      expect(await other.get(key)).toMatchObject({ key, owner: 'worker-a#1', result: success({ n: 1 }) });
    });

    it('should keep the first completion of a key and answer it to every later one', async () => {
      const [store, other] = handles();
      const key = newKey();
      await store.claim(key, 'a#1', 5000);
      await store.complete(key, 'a#1', success('first'));
      expect(await other.complete(key, 'b#1', success('second'))).toMatchObject({ owner: 'a#1', result: success('first') });
      expect(await store.get(key)).toMatchObject({ owner: 'a#1', result: success('first') });
    });

    it('should give a key to exactly one of 10 concurrent claimers', async () => {
      const [store, other] = handles();
      const key = newKey();
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? store : other).claim(key, `worker-${i}#1`, 5000)),
      );
      expect(claims.filter((claim) => claim.kind === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim.kind === 'busy')).toHaveLength(9);
      const winner = claims.findIndex((claim) => claim.kind === 'claimed');
      const busy = claims.filter((claim) => claim.kind === 'busy');
      expect(busy.map((claim) => claim.owner)).toEqual(busy.map(() => `worker-${winner}#1`));
    });

    it('should let another owner take a key over once the lease of a dead owner ran out', async () => {
      const [store, other] = handles();
      const key = newKey();
      expect(await store.claim(key, 'dead#1', 200)).toMatchObject({ kind: 'claimed' });
      const busy = await other.claim(key, 'alive#1', 5000);
      expect(busy).toMatchObject({ kind: 'busy', owner: 'dead#1' });
      await sleep(Math.max(0, (busy.kind === 'busy' ? busy.until : 0) - Date.now()) + 50);

      expect(await other.claim(key, 'alive#1', 5000)).toMatchObject({ kind: 'claimed' });
      expect(await store.claim(key, 'third#1', 5000)).toMatchObject({ kind: 'busy', owner: 'alive#1' });
      // The dead owner's lease is gone: it cannot renew; if it wakes up and completes, the first result still wins.
      expect(await store.renew(key, 'dead#1', 5000)).toBe(false);
      expect(await other.renew(key, 'alive#1', 5000)).toBe(true);
      await other.complete(key, 'alive#1', success('alive'));
      expect(await store.complete(key, 'dead#1', success('dead'))).toMatchObject({ owner: 'alive#1', result: success('alive') });
    });

    it('should keep a renewed lease alive past its first end', async () => {
      const [store, other] = handles();
      const key = newKey();
      // Renewed at once for much longer, then asked again once the first lease has ended: the
      // margins are seconds, not the scheduling of a loaded machine.
      const claimed = await store.claim(key, 'slow#1', 1000);
      expect(claimed).toMatchObject({ kind: 'claimed' });
      expect(await store.renew(key, 'slow#1', 4000)).toBe(true);
      await sleep(Math.max(0, (claimed.kind === 'claimed' ? claimed.until : 0) - Date.now()) + 100);
      expect(await other.claim(key, 'eager#1', 300)).toMatchObject({ kind: 'busy', owner: 'slow#1' });
    });

    it('should let only the holder release a claim, after which the key can be claimed at once', async () => {
      const [store, other] = handles();
      const key = newKey();
      await store.claim(key, 'a#1', 5000);
      await other.release(key, 'b#1');
      expect(await other.claim(key, 'b#1', 5000)).toMatchObject({ kind: 'busy', owner: 'a#1' });
      await store.release(key, 'a#1');
      expect(await other.claim(key, 'b#1', 5000)).toMatchObject({ kind: 'claimed' });
      expect(await other.get(key)).toBeUndefined();
      // Releasing a done key changes nothing.
      await other.complete(key, 'b#1', success(1));
      await other.release(key, 'b#1');
      expect(await store.get(key)).toMatchObject({ result: success(1) });
    });

    it('should store a failed call and replay its error exactly', async () => {
      const [store, other] = handles();
      const key = newKey();
      await store.claim(key, 'a#1', 5000);
      await store.complete(key, 'a#1', failed);
      const claim = await other.claim(key, 'b#1', 5000);
      expect(claim).toMatchObject({ kind: 'stored', result: failed });
      expect(claim.kind === 'stored' && claim.result).toStrictEqual(failed);
    });

    it("should keep keys with ':' apart", async () => {
      const [store, other] = handles();
      const trace = `tr-${randomBytes(4).toString('hex')}`;
      const keys = [`${trace}:1`, `${trace}:2`, `${trace.replace('-', '_')}:1`, `${trace}:1:2`, `${trace}:12`];
      for (const key of keys) {
        expect(await store.claim(key, 'a#1', 5000)).toMatchObject({ kind: 'claimed' });
        await store.complete(key, 'a#1', success(key));
      }
      for (const key of keys) expect(await other.get(key)).toMatchObject({ key, result: success(key) });
    });

    it('should refuse invalid keys before touching the store', async () => {
      const [store] = handles();
      for (const key of ['', 'a b', 'a.b:1', 'a*', 'a>', ':a', 'a:', 'a::b', 'a/b', 'x'.repeat(257)]) {
        for (const call of [() => store.claim(key, 'a#1', 1000), () => store.complete(key, 'a#1', success(1)), () => store.get(key)]) {
          const error: unknown = await call().then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
          expect(error, key).toBeInstanceOf(RedflowError);
          expect(error).toMatchObject({ code: ErrorCode.TOOL_RESULT_STORE_FAILED });
        }
      }
    });

    it('should copy results in and out', async () => {
      const [store, other] = handles();
      const key = newKey();
      const output = { list: [1, 2] };
      await store.claim(key, 'a#1', 5000);
      const stored = await store.complete(key, 'a#1', { ok: true, output });
      output.list.push(3);
      ((stored.result as { output: { list: number[] } }).output.list).push(4);
      expect(await other.get(key)).toMatchObject({ result: success({ list: [1, 2] }) });
    });
  });
}

const inProcess = createInProcessToolResultStore();
describeToolResultStoreContract('the in-process tool result store', () => [inProcess, inProcess]);
describeToolResultStoreContract('the NATS KV tool result store', () => [natsStore, otherNatsStore]);

describe('the NATS KV tool result store', () => {
  it("should store an idempotency key under its ':'-free KV key", async () => {
    const key = newKey(3);
    await natsStore.claim(key, 'a#1', 5000);
    await natsStore.complete(key, 'a#1', success(3));
    expect(toolResultKvKey(key)).toBe(key.replace(':', '.'));
    const kv = await new Kvm(nc).open(BUCKET);
    const entry = await kv.get(toolResultKvKey(key));
    expect(JSON.parse(entry?.string() ?? 'null')).toEqual({ v: 1, state: 'done', owner: 'a#1', result: success(3) });
  });

  it('should claim and complete a key nobody else touches in two writes and no read', async () => {
    const key = newKey();
    const seen = { reads: 0, writes: 0 };
    // Another connection sees every request the store makes: reads of the bucket's stream, writes on its keys.
    const reads = coreNc.subscribe(`$JS.API.*.*.KV_${BUCKET}.>`, { callback: () => void (seen.reads += 1) });
    const directReads = coreNc.subscribe(`$JS.API.*.*.KV_${BUCKET}`, { callback: () => void (seen.reads += 1) });
    const writes = coreNc.subscribe(`$KV.${BUCKET}.${toolResultKvKey(key)}`, { callback: () => void (seen.writes += 1) });
    await coreNc.flush();
    expect(await natsStore.claim(key, 'a#1', 5000)).toMatchObject({ kind: 'claimed' });
    expect(await natsStore.complete(key, 'a#1', success('once'))).toMatchObject({ result: success('once'), owner: 'a#1' });
    await nc.flush();
    await coreNc.flush();
    for (const subscription of [reads, directReads, writes]) subscription.unsubscribe();
    expect(seen).toEqual({ reads: 0, writes: 2 });
    // What the store decided without reading is what a reader finds.
    expect(await otherNatsStore.claim(key, 'b#1', 5000)).toMatchObject({ kind: 'stored', result: success('once'), owner: 'a#1' });
  });

  it('should complete a key after its own renewal, and after a takeover keep the first stored result', async () => {
    const key = newKey();
    await natsStore.claim(key, 'a#1', 5000);
    expect(await natsStore.renew(key, 'a#1', 5000)).toBe(true);
    expect((await natsStore.complete(key, 'a#1', success('a'))).result).toEqual(success('a'));

    const taken = newKey();
    const claimed = await natsStore.claim(taken, 'a#1', 100);
    await sleep(Math.max(0, (claimed.kind === 'claimed' ? claimed.until : 0) - Date.now()) + 50); // a's lease has ended
    expect(await otherNatsStore.claim(taken, 'b#1', 5000)).toMatchObject({ kind: 'claimed' });
    // a's write at its claim's revision is refused; it reads, finds b's claim, and stores its result first.
    expect((await natsStore.complete(taken, 'a#1', success('a'))).owner).toBe('a#1');
    expect((await otherNatsStore.complete(taken, 'b#1', success('b'))).result).toEqual(success('a'));
    expect(await natsStore.renew(taken, 'a#1', 100)).toBe(false);
  });

  it('should tell an owner renewing a key released or never claimed that it holds no lease, and leave the key free to claim', async () => {
    const released = newKey();
    await natsStore.claim(released, 'a#1', 5000);
    await natsStore.release(released, 'a#1');
    const never = newKey();

    // Asked of the other handle, which has no write of its own to go by: it reads, then confirms.
    expect(await otherNatsStore.renew(released, 'a#1', 5000)).toBe(false);
    expect(await otherNatsStore.renew(never, 'a#1', 5000)).toBe(false);
    expect(await natsStore.claim(released, 'b#1', 5000)).toMatchObject({ kind: 'claimed' });
    expect(await natsStore.claim(never, 'b#1', 5000)).toMatchObject({ kind: 'claimed' });
  });

  it('should say which key holds something it did not write', async () => {
    const key = newKey();
    const kv = await new Kvm(nc).open(BUCKET);
    await kv.put(toolResultKvKey(key), 'not a record');
    await expect(natsStore.claim(key, 'a#1', 1000)).rejects.toMatchObject({
      code: ErrorCode.TOOL_RESULT_STORE_FAILED,
      message: expect.stringContaining(`${BUCKET} (key ${toolResultKvKey(key)})`),
    });
  });
});

describe('serveIdempotentTool over NATS', () => {
  const transports: Transport[] = [];
  let logged: string[] = [];

  afterEach(async () => {
    await Promise.all(transports.splice(0).map((transport) => transport.close()));
    logged = [];
  });

  function natsTransport(connection: NatsConnection): Transport {
    const transport = createNatsTransport(connection, { log: (line) => logged.push(line) });
    transports.push(transport);
    return transport;
  }

  /** A tool that counts its executions, waits `ms`, then returns (or throws) what `outcome` says. */
  function countingTool(outcome: (n: number) => unknown = (n) => ({ n }), ms = 0): ToolDefinition & { readonly executions: string[] } {
    const executions: string[] = [];
    return {
      name: 'count',
      description: 'Counts its executions',
      inputSchema: { type: 'object' },
      executions,
      async execute(_input, context) {
        executions.push(context.idempotencyKey);
        if (ms > 0) await sleep(ms);
        const result = outcome(executions.length);
        if (result instanceof Error) throw result;
        return result;
      },
    };
  }

  /** Serves `tool` on a fresh subject on the worker connection(s) and returns how to call it. */
  async function serve(
    tool: ToolDefinition,
    options: ServeIdempotentToolOptions & { store?: ToolResultStore; workers?: NatsConnection[] } = {},
  ): Promise<(key: string, timeoutMs?: number) => Promise<Reply<ToolResult>>> {
    const subject = `${uniquePrefix()}.tool.count`;
    const workers = options.workers ?? [nc];
    workers.forEach((connection, i) =>
      serveIdempotentTool(natsTransport(connection), subject, tool, options.store ?? (i === 0 ? natsStore : otherNatsStore), {
        owner: `worker-${i}`,
        log: (line) => logged.push(line),
        ...options,
        // Different queue groups: every worker gets every request, so they race for each key.
        queue: `${subject}.worker-${i}`,
      }),
    );
    await Promise.all(workers.map((connection) => connection.flush()));
    const core = natsTransport(coreNc);
    return (key, timeoutMs = 5000) => {
      const request: ToolRequest = { traceId: key.split(':')[0] ?? '', iteration: 1, tool: tool.name, input: {}, idempotencyKey: key };
      return core.request<ToolRequest, ToolResult>(subject, request, { timeoutMs });
    };
  }

  it('should execute a repeated key once and answer every repeat with the same result', async () => {
    const tool = countingTool();
    const call = await serve(tool);
    const key = newKey();
    const first = await call(key);
    expect(first).toEqual({ ok: true, data: success({ n: 1 }) });
    expect(await call(key)).toEqual(first);
    expect(await call(key)).toEqual(first);
    expect(tool.executions).toEqual([key]);
    expect(await call(newKey(2))).toEqual({ ok: true, data: success({ n: 2 }) });
    expect(logged).toEqual([]);
  });

  it('should execute one key exactly once for 10 concurrent requests racing on two workers', async () => {
    const tool = countingTool((n) => ({ n }), 100);
    const call = await serve(tool, { workers: [nc, otherNc] });
    const key = newKey();
    const replies = await Promise.all(Array.from({ length: 10 }, () => call(key)));
    expect(tool.executions).toEqual([key]);
    for (const reply of replies) expect(reply).toEqual({ ok: true, data: success({ n: 1 }) });
  });

  it('should take over a key whose owner died, once its lease ran out', async () => {
    const tool = countingTool();
    const call = await serve(tool);
    const key = newKey();
    await natsStore.claim(toolResultKey('count', key), 'dead-worker#1', 400); // claimed, never completed
    const started = Date.now();
    expect(await call(key)).toEqual({ ok: true, data: success({ n: 1 }) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(tool.executions).toEqual([key]);
    expect(await natsStore.get(toolResultKey('count', key))).toMatchObject({ owner: expect.stringMatching(/^worker-0#/), result: success({ n: 1 }) });
  });

  it("should make one claim of a key at a time when several repeats on one worker wait out a dead owner's lease", async () => {
    // They all wake when the lease runs out: each taking the key over at the revision it read is
    // safe only if the server enforces the check between two writes in flight, and nats-server 2.9
    // in a cluster was seen to accept both (the call ran twice). One claim at a time does not ask it to.
    let inFlight = 0;
    let most = 0;
    const counted: ToolResultStore = {
      ...natsStore,
      async claim(key, owner, leaseMs) {
        most = Math.max(most, ++inFlight);
        try {
          return await natsStore.claim(key, owner, leaseMs);
        } finally {
          inFlight--;
        }
      },
    };
    const tool = countingTool();
    const call = await serve(tool, { store: counted });
    const key = newKey();
    await natsStore.claim(toolResultKey('count', key), 'dead-worker#1', 400);
    const replies = await Promise.all(Array.from({ length: 6 }, () => call(key)));
    expect(most).toBe(1);
    expect(tool.executions).toEqual([key]);
    for (const reply of replies) expect(reply).toEqual({ ok: true, data: success({ n: 1 }) });
  });

  it('should store a failed execution and replay it without executing again', async () => {
    const tool = countingTool(() => new RedflowError({ code: ErrorCode.TOOL_HTTP_STATUS, message: 'upstream said 503' }));
    const call = await serve(tool);
    const key = newKey();
    const first = await call(key);
    expect(first).toEqual({ ok: true, data: { ok: false, error: { code: ErrorCode.TOOL_HTTP_STATUS, message: 'upstream said 503' } } });
    expect(await call(key)).toEqual(first);
    expect(tool.executions).toHaveLength(1);
  });

  it('should answer a stored result without executing, and wait for a live owner to store its result', async () => {
    const tool = countingTool();
    const call = await serve(tool);
    const done = newKey();
    await natsStore.complete(toolResultKey('count', done), 'earlier#1', success('stored earlier'));
    expect(await call(done)).toEqual({ ok: true, data: success('stored earlier') });

    const running = newKey();
    await otherNatsStore.claim(toolResultKey('count', running), 'other#1', 5000);
    setTimeout(() => void otherNatsStore.complete(toolResultKey('count', running), 'other#1', success('from the other worker')), 200);
    expect(await call(running)).toEqual({ ok: true, data: success('from the other worker') });
    expect(tool.executions).toEqual([]);
  });

  it("should answer a repeat of a key with this worker's own execution when the store was out of reach past the lease", async () => {
    // The store takes claims but no renewal or result while `down`: after an outage longer than
    // the lease, the claim of the call under way looks run out, and the repeat (re-sent by a core
    // worker whose attempt timed out) must not execute the call a second time.
    const inner = createInProcessToolResultStore();
    let down = false;
    const outage = () => Promise.reject(new RedflowError({ code: ErrorCode.TOOL_RESULT_STORE_FAILED, message: 'no leader', retryable: true }));
    const store: ToolResultStore = {
      ...inner,
      claim: (...args) => inner.claim(...args),
      renew: (...args) => (down ? outage() : inner.renew(...args)),
      complete: (...args) => (down ? outage() : inner.complete(...args)),
    };
    const tool = countingTool((n) => ({ n }), 20);
    const call = await serve(tool, { store, leaseMs: 300 });
    const key = newKey();
    down = true;
    const first = call(key, 10_000);
    await expect.poll(() => tool.executions.length).toBe(1);
    await sleep(600);
    const repeat = call(key, 10_000);
    await sleep(200);
    down = false;
    const replies = await Promise.all([first, repeat]);
    expect(tool.executions).toEqual([key]);
    for (const reply of replies) expect(reply).toEqual({ ok: true, data: success({ n: 1 }) });
  });

  it('should answer TOOL_CALL_IN_PROGRESS when another worker keeps a key longer than busyWaitMs', async () => {
    const tool = countingTool();
    const call = await serve(tool, { busyWaitMs: 200 });
    const key = newKey();
    await otherNatsStore.claim(toolResultKey('count', key), 'other#1', 5000);
    const reply = await call(key);
    expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_CALL_IN_PROGRESS, retryable: true } });
    expect(tool.executions).toEqual([]);
  });

  it('should not store a call interrupted by the worker shutting down, so the retry executes it', async () => {
    const waits: ToolDefinition & { executions: string[] } = {
      name: 'wait',
      description: 'Waits for its signal',
      inputSchema: { type: 'object' },
      executions: [],
      execute(_input, { signal, idempotencyKey }) {
        waits.executions.push(idempotencyKey);
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('interrupted'))));
      },
    };
    const call = await serve(waits);
    const key = newKey();
    const pending = call(key);
    await expect.poll(() => waits.executions.length).toBe(1);
    await transports[0]?.close(); // the worker's transport: aborts the running call
    expect(await pending).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_CLOSED, retryable: true } });
    expect(await natsStore.get(toolResultKey('wait', key))).toBeUndefined();

    const tool = { ...countingTool(), name: 'wait' };
    const again = await serve(tool);
    // The same tool and key on a new subject, stored in the same bucket: it runs now (the claim was released).
    expect(await again(key)).toEqual({ ok: true, data: success({ n: 1 }) });
    expect(tool.executions).toEqual([key]);
  });

  it("should keep each tool's results apart: one idempotency key never answers another tool's call", async () => {
    const first = countingTool(() => 'first tool');
    const second = { ...countingTool(() => 'second tool'), name: 'count_again' };
    const callFirst = await serve(first);
    const callSecond = await serve(second);
    const key = newKey();
    expect(await callFirst(key)).toEqual({ ok: true, data: success('first tool') });
    expect(await callSecond(key)).toEqual({ ok: true, data: success('second tool') });
    expect([first.executions, second.executions]).toEqual([[key], [key]]);
    expect(await natsStore.get(toolResultKey('count_again', key))).toMatchObject({ result: success('second tool') });
  });

  it("should refuse to serve a tool whose name cannot head its results' keys", () => {
    const tool = { ...countingTool(), name: 'lookup.order' };
    expect(() => serveIdempotentTool(natsTransport(nc), `${uniquePrefix()}.tool.x`, tool, natsStore)).toThrow(
      expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID }),
    );
  });

  it('should refuse a request without a valid idempotency key', async () => {
    const tool = countingTool();
    const call = await serve(tool);
    expect(await call('not a key')).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE } });
    expect(tool.executions).toEqual([]);
  });
});
