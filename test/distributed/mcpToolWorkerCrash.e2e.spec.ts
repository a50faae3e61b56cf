import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { EVERYTHING_STDIO, final, tool, writeMcpFlow } from '../support/mcpFlows.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

/**
 * A tool worker process that dies (SIGKILL) in the middle of an MCP tool call: the core worker
 * sends the call again with the same idempotency key, another tool worker (with its own MCP
 * server) runs it, and the log holds the call once, completed.
 */

const SLOW = 'trigger-long-running-operation';
let dir: string;
let nc: NatsConnection;
const prefix = uniquePrefix();
const closers: (() => Promise<void>)[] = [];
let doomed: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-crash-'));
  nc = await connectTestServer('mcp-crash');
});

afterAll(async () => {
  if (doomed !== undefined && doomed.exitCode === null && doomed.signalCode === null) {
    doomed.kill('SIGKILL');
    await exited(doomed);
  }
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('an MCP tool call whose tool worker dies', () => {
  it('is sent again to another tool worker with the same key and recorded once, completed', async () => {
    const flowPath = await writeMcpFlow(dir, 'mcp-crash', { ...EVERYTHING_STDIO, include: [SLOW] }, [tool(SLOW, { duration: 3, steps: 3 }), final('done')]);
    // The first tool worker, a process of its own: its claim on a call lasts 1 s once it is gone.
    doomed = await startWorkerProcess(flowPath, 'tool', { prefix, extraArgs: ['--lease', '1000'] });
    const models = await startActorWorker({ nc, flowPath, prefix, roles: ['model'] });
    closers.push(() => models.close());
    const events: AgentEvent[] = [];
    const core = await startCoreWorker({ nc, flowPath, prefix, leaseMs: 1000, attemptTimeoutMs: 1500, onEvent: (event) => events.push(event) });
    closers.push(() => core.close());

    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'crash' });
    await eventually(() => events.some((event) => event.type === 'tool.requested'), 10_000);
    // The call is under way on the doomed worker's MCP server (it takes 3 s): kill the worker.
    await new Promise((resolve) => setTimeout(resolve, 500));
    doomed.kill('SIGKILL');
    await exited(doomed);
    const heir = await startActorWorker({ nc, flowPath, prefix, roles: ['tool'], serveTool: await idempotentToolServer(nc, prefix, { leaseMs: 1000 }) });
    closers.push(() => heir.close());

    const { outcome, envelope } = await run.result;
    expect(outcome).toMatchObject({ status: 'done', answer: 'done' });
    expect(envelope.tools.history.map((call) => [call.tool, call.status, call.output])).toEqual([[SLOW, 'succeeded', expect.stringContaining('Long running operation completed')]]);
    const store = await openJetStreamEventStore(nc, { prefix });
    const { events: logged, problems } = await store.read('crash');
    await store.close();
    expect(problems).toEqual([]);
    expect(logged.filter((event) => event.type === 'tool.requested')).toHaveLength(1);
    expect(logged.filter((event) => event.type === 'tool.completed')).toHaveLength(1);
  }, 60_000);
});
