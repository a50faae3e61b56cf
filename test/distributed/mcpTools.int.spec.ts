import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { askMcpToolSpecs, mcpToolListSubject } from '../../src/nats/cluster/mcpToolLists.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { EVERYTHING_STDIO, FAULTY, final, tool, writeMcpFlow } from '../support/mcpFlows.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from './clusterSupport.js';

/**
 * tool.mcp on a cluster: the tool worker runs the MCP server (server-everything from npm, and the
 * SDK-built fixture server that reports its process id) and holds one connection per node for
 * every call; the core worker learns the server's tools from the tool worker.
 */

let dir: string;
let nc: NatsConnection;
const prefixes: string[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-mcp-'));
  nc = await connectTestServer('cluster-mcp');
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  for (const prefix of prefixes) await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

/** A flow with server-everything (only `echo`) and the fixture server (only `count`), both allowed by their node names. */
async function writeFlow(name: string, countFile: string): Promise<string> {
  return writeMcpFlow(
    dir,
    name,
    { ...EVERYTHING_STDIO, include: ['echo'] },
    [tool('echo', { message: 'over NATS' }), tool('count', {}), final('done')],
    { allowedTools: ['mcp', 'faulty'] },
    [{ id: 'faulty', type: 'tool.mcp', config: { ...FAULTY, include: ['count'], env: { COUNT_FILE: countFile } } }],
  );
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('tool.mcp on a cluster', () => {
  it('should run MCP tools on the tool worker, over one connection per server for every run, and stop the server when the worker closes', async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const countFile = path.join(dir, 'count.txt');
    const flowPath = await writeFlow('cluster-mcp', countFile);
    const actors: ActorWorker = await startActorWorker({ nc, flowPath, prefix, roles: ['model', 'tool'], serveTool: await idempotentToolServer(nc, prefix) });
    let actorsClosed = false;
    closers.push(async () => {
      if (!actorsClosed) await actors.close();
    });
    expect(actors.subjects).toEqual(expect.arrayContaining([`${prefix}.tool.echo`, `${prefix}.tool.count`, mcpToolListSubject(prefix, 'mcp'), mcpToolListSubject(prefix, 'faulty')]));
    const core = await startCoreWorker({ nc, flowPath, prefix, leaseMs: 1000 });
    closers.push(() => core.close());

    for (const traceId of ['mcp-a', 'mcp-b']) {
      const run = await startRemoteRun({ nc, prefix, input: 'go', traceId });
      const { outcome, envelope } = await run.result;
      expect(outcome).toMatchObject({ status: 'done', answer: 'done' });
      expect(envelope.tools.history.map((call) => [call.tool, call.status, call.output])).toEqual([
        ['echo', 'succeeded', 'Echo: over NATS'],
        ['count', 'succeeded', expect.stringMatching(/^pid \d+$/)],
      ]);
    }

    // The run records the servers' tools as the tool worker listed them, each node's name expanded.
    const store = await openJetStreamEventStore(nc, { prefix });
    const { events } = await store.read('mcp-a');
    await store.close();
    const started = events.find((event) => event.type === 'run.started')?.data as { agent: { allowedTools: string[] }; tools: { name: string; description: string }[] };
    expect(started.agent.allowedTools).toEqual(['echo', 'count']);
    expect(started.tools.map((spec) => spec.name)).toEqual(['echo', 'count']);
    expect(started.tools[0]?.description).toMatch(/echo/i);

    // Both runs' calls reached one server process, each with its call's idempotency key.
    const lines = (await readFile(countFile, 'utf8')).trim().split('\n');
    const pids = new Set(lines.map((line) => line.split(' ')[0]));
    expect(pids.size).toBe(1);
    expect(lines.map((line) => JSON.parse(line.slice(line.indexOf(' ') + 1)) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ 'redflow/idempotencyKey': expect.stringContaining('mcp-a') }),
      expect.objectContaining({ 'redflow/idempotencyKey': expect.stringContaining('mcp-b') }),
    ]);

    const pid = Number([...pids][0]);
    expect(processAlive(pid)).toBe(true);
    await actors.close();
    actorsClosed = true;
    await eventually(() => !processAlive(pid), 5000);
  });

  it('should refuse to list an MCP server nobody serves with MCP_SERVER_UNAVAILABLE naming the server and the tool worker to start', async () => {
    const prefix = uniquePrefix();
    await expect(askMcpToolSpecs(nc, prefix, { waitMs: 300 })('fs')).rejects.toMatchObject({ code: ErrorCode.MCP_SERVER_UNAVAILABLE, message: expect.stringContaining("MCP server 'fs'"), hint: expect.stringContaining('--role tool') });
  });

  it('should start a core worker before its tool worker and learn the MCP tools once the tool worker is up', async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const flowPath = await writeFlow('cluster-mcp-late', path.join(dir, 'late.txt'));
    const coreStarting = startCoreWorker({ nc, flowPath, prefix, leaseMs: 1000 });
    // The core asks for the servers' tools and waits: nothing serves them yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const actors = await startActorWorker({ nc, flowPath, prefix, roles: ['model', 'tool'] });
    closers.push(() => actors.close());
    const core = await coreStarting;
    closers.push(() => core.close());
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'late' });
    expect((await run.result).outcome).toMatchObject({ status: 'done', answer: 'done' });
  });
});
