// Distributed mode keeps a tool's results by idempotency key only where a repeat would matter: a
// tool declared idempotent is served plainly (no KV writes, a repeated key runs again), a tool with
// effects answers a repeated key from the stored result. Against the nats-server on 127.0.0.1:4222.
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import { Storage, Subject } from '../../src/actors/subjects.js';
import type { ToolDefinition, ToolRequest, ToolResult } from '../../src/actors/tool.js';
import type { Subscription } from '../../src/actors/transport.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';

const prefix = uniquePrefix();
let workerNc: NatsConnection;
let coreNc: NatsConnection;
const served: Subscription[] = [];
const calls = { lookup: 0, charge: 0 };

const lookup: ToolDefinition = {
  name: 'lookup',
  description: 'Reads an order',
  inputSchema: { type: 'object' },
  idempotent: true,
  execute: () => ({ status: 'shipped', read: ++calls.lookup }),
};
const charge: ToolDefinition = {
  name: 'charge',
  description: 'Charges a card',
  inputSchema: { type: 'object' },
  execute: () => ({ charged: ++calls.charge }),
};

beforeAll(async () => {
  workerNc = await connectTestServer('idempotent-tools-worker');
  coreNc = await connectTestServer('idempotent-tools-core');
  const serve = await idempotentToolServer(workerNc, prefix);
  const transport = createNatsTransport(workerNc);
  for (const tool of [lookup, charge]) served.push(serve(transport, Subject.tool(prefix, tool.name), tool));
  await workerNc.flush();
});

afterAll(async () => {
  for (const subscription of served) subscription.unsubscribe();
  await (await new Kvm(workerNc).open(Storage.toolResultsBucket(prefix))).destroy().catch(() => undefined);
  await Promise.all([workerNc.drain(), coreNc.drain()]);
});

/** Asks tool `name` for the call `traceId:1`, as a core worker would (again after a crash). */
async function call(name: string, traceId: string): Promise<ToolResult> {
  const transport = createNatsTransport(coreNc);
  try {
    const request: ToolRequest = { traceId, iteration: 1, tool: name, input: {}, idempotencyKey: `${traceId}:1` };
    const reply = await transport.request<ToolRequest, ToolResult>(Subject.tool(prefix, name), request, { timeoutMs: 5000 });
    if (!reply.ok) throw new Error(`${name}: ${reply.error.code} ${reply.error.message}`);
    return reply.data;
  } finally {
    await transport.close();
  }
}

/** The keys the tool-results bucket holds now. */
async function storedKeys(): Promise<string[]> {
  const kv = await new Kvm(coreNc).open(Storage.toolResultsBucket(prefix));
  const keys: string[] = [];
  for await (const key of await kv.keys()) keys.push(key);
  return keys.sort();
}

describe('tool results kept by distributed tool workers', () => {
  it('should keep no result for a tool declared idempotent: a repeated call runs again and writes nothing', async () => {
    const first = await call('lookup', 'run-read');
    const repeat = await call('lookup', 'run-read');
    expect(first).toEqual({ ok: true, output: { status: 'shipped', read: 1 } });
    expect(repeat).toEqual({ ok: true, output: { status: 'shipped', read: 2 } });
    expect((await storedKeys()).filter((key) => key.startsWith('lookup.'))).toEqual([]);
  });

  it('should answer a repeated call of a tool with effects from its kept result, running it once', async () => {
    const first = await call('charge', 'run-pay');
    const repeat = await call('charge', 'run-pay');
    expect(first).toEqual({ ok: true, output: { charged: 1 } });
    expect(repeat).toEqual(first);
    expect(calls.charge).toBe(1);
    expect((await storedKeys()).filter((key) => key.startsWith('charge.'))).toEqual(['charge.run-pay.1']);
  });
});
