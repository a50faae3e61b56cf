import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInbox, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { NatsHeader } from '../../src/nats/natsTransport.js';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { jetstreamManager } from '@nats-io/jetstream';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { requestRunAbort } from '../../src/nats/cluster/runAborts.js';
import { REPO_ROOT, STACK_FRAME, runCli } from '../support/cli.js';
import { NATS_URL, connectTestServer, eventually, startServerWithConfig, uniquePrefix, type PrivateNatsServer } from '../nats/natsSupport.js';
import { endingWithin, killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// How the distributed commands fail when the cluster is not what they need: the exit code the
// README gives (69: a service cannot be reached; 64: a wrong command line), a coded message with
// a hint, never a stack trace. Real processes against real nats-servers.

const ORDER_STATUS = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');
const SLOW = path.join(REPO_ROOT, 'test', 'fixtures', 'slow', 'flow.json');
const processes: RedflowProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-errors-'));
});

afterAll(async () => {
  await killAll(processes);
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

function redflow(args: readonly string[]): RedflowProcess {
  const started = startRedflow(args);
  processes.push(started);
  return started;
}

describe('redflow run --nats without a core worker', () => {
  it('should exit 69 with TRANSPORT_NO_RESPONDER and say how to start one for its prefix', async () => {
    const prefix = uniquePrefix();
    const result = await runCli(['run', ORDER_STATUS, '--nats', NATS_URL, '--prefix', prefix, '--input', 'Where is A-1001?'], { cwd: dir });
    expect(result.code).toBe(69);
    expect(result.stderr).toContain(`error ${ErrorCode.TRANSPORT_NO_RESPONDER}`);
    expect(result.stderr).toContain(`hint: no core worker is running for prefix "${prefix}": start one with \`redflow worker <flow> --role core --nats <url> --prefix ${prefix}\``);
    expect(result.stderr).not.toMatch(STACK_FRAME);
  });
});

describe('redflow fork --nats without a core worker', () => {
  it('should exit 69 with TRANSPORT_NO_RESPONDER and the same hint as run, storing no fork', async () => {
    const prefix = uniquePrefix();
    const log = path.join(dir, 'fork-parent.jsonl');
    const recorded = await runCli(['run', ORDER_STATUS, '--input', 'Where is A-1001?', '--log', log], { cwd: dir });
    expect(recorded.code, recorded.stderr).toBe(0);
    const result = await runCli(['fork', log, '--at', '2', '--nats', NATS_URL, '--prefix', prefix], { cwd: dir, timeoutMs: 30_000 });
    expect(result.code, result.stderr).toBe(69);
    expect(result.stderr).toContain(`error ${ErrorCode.TRANSPORT_NO_RESPONDER}`);
    expect(result.stderr).toContain(`hint: no core worker is running for prefix "${prefix}": start one with \`redflow worker <flow> --role core --nats <url> --prefix ${prefix}\``);
    expect(result.stderr).not.toMatch(STACK_FRAME);
    // Refused before its log was stored: a core worker started later finds no fork to take over.
    const nc = await connectTestServer('fork-no-core-test');
    cleanups.push(() => nc.drain());
    const jsm = await jetstreamManager(nc);
    const stream = await jsm.streams.info(Storage.traceStream(prefix)).catch(() => undefined);
    expect(stream?.state.messages ?? 0).toBe(0);
  }, 60_000);
});

describe('a nats-server without JetStream', () => {
  let server: PrivateNatsServer;

  beforeAll(async () => {
    server = await startServerWithConfig(dir, 'no-jetstream', '# no jetstream block: JetStream is off');
    cleanups.push(() => server.stop());
  });

  it.each(['core', 'tool', 'memory', 'core,model,tool,memory'])('should make `redflow worker --role %s` exit 69 saying JetStream is not enabled', async (roles) => {
    const started = redflow(['worker', ORDER_STATUS, '--role', roles, '--nats', server.url]);
    expect(await endingWithin(started, 20_000)).toEqual({ code: 69, signal: null });
    expect(started.stderr()).toContain(`error ${ErrorCode.JETSTREAM_NOT_ENABLED}: JetStream is not enabled`);
    expect(started.stderr()).toContain('nats-server -js');
    expect(started.stderr()).not.toMatch(STACK_FRAME);
    expect(started.stderr()).not.toMatch(/internal error|a bug/);
  }, 30_000);

  it('should make `redflow run --nats` exit 69 saying JetStream is not enabled', async () => {
    const result = await runCli(['run', ORDER_STATUS, '--nats', server.url, '--input', 'Where is A-1001?'], { cwd: dir });
    expect(result.code).toBe(69);
    expect(result.stderr).toContain(`error ${ErrorCode.JETSTREAM_NOT_ENABLED}`);
    expect(result.stderr).toContain('nats-server -js');
    expect(result.stderr).not.toMatch(STACK_FRAME);
  });

  it('should still host a model, which needs no JetStream', async () => {
    const started = redflow(['worker', ORDER_STATUS, '--role', 'model', '--nats', server.url]);
    await started.ready();
    started.child.kill('SIGTERM');
    expect(await endingWithin(started, 15_000)).toEqual({ code: 0, signal: null });
  }, 30_000);
});

describe('subject prefixes', () => {
  it.each(['acme_prod', 'Acme', 'acme.Prod', 'ACME.PROD'])('should refuse --prefix %s with a usage error (64): it would share another prefix\'s stream or buckets', async (prefix) => {
    for (const args of [
      ['worker', ORDER_STATUS, '--nats', NATS_URL, '--prefix', prefix],
      ['run', ORDER_STATUS, '--nats', NATS_URL, '--prefix', prefix, '--input', 'x'],
    ]) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, args[0]).toBe(64);
      expect(result.stderr).toContain(`error ${ErrorCode.CLI_USAGE}: "${prefix}" is not a valid subject prefix`);
      expect(result.stderr).toMatch(/hint: use lowercase letters, digits and -/);
    }
  });

  it('should refuse such a prefix in the library too, before touching the server', async () => {
    const nc = await connectTestServer('prefix-refusal');
    cleanups.push(() => nc.close());
    await expect(startCoreWorker({ nc, flowPath: ORDER_STATUS, prefix: 'acme_prod' })).rejects.toMatchObject({ code: ErrorCode.SUBJECT_PREFIX_INVALID });
  });
});

describe('an abort request over the payload limit', () => {
  let server: PrivateNatsServer;
  let client: NatsConnection;

  beforeAll(async () => {
    // A server that lets 4 MB through: only Redflow's own limit (1 MiB) stands in the way.
    server = await startServerWithConfig(dir, 'large-payloads', `max_payload: 4MB\njetstream { store_dir: "${path.join(dir, 'large-js')}" }`);
    cleanups.push(() => server.stop());
    client = await connectNats({ servers: server.url, name: 'large-abort', timeoutMs: 2000 });
    cleanups.push(() => client.close());
  });

  /** Sends a JSON request of exactly `size` bytes, valid but for its size, and resolves with the one reply. */
  async function reply(subject: string, size: number): Promise<Msg> {
    // A short reason and a field the abort request ignores, to make up the size.
    const padding = size - JSON.stringify({ reason: 'too big', padding: '' }).length;
    const body = JSON.stringify({ reason: 'too big', padding: 'x'.repeat(padding) });
    const inbox = createInbox();
    const sub = client.subscribe(inbox, { max: 1 });
    client.publish(subject, new TextEncoder().encode(body), { reply: inbox });
    for await (const msg of sub) return msg;
    throw new Error(`no reply on ${subject}`);
  }

  it('should be refused as on any other subject (TRANSPORT_BAD_MESSAGE), and leave the run going', async () => {
    const worker = redflow(['worker', SLOW, '--nats', server.url]);
    await worker.ready();
    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc: client, input: 'wait', onEvent: (event) => live.push(event) });
    await eventually(() => live.some((event) => event.type === 'tool.requested'), 10_000);

    const size = 1_500_000;
    const toTool = await reply(Subject.tool('redflow', 'wait'), size);
    const toAbort = await reply(Subject.runAbort('redflow', run.traceId), size);
    for (const refused of [toTool, toAbort]) {
      expect(refused.headers?.get(NatsHeader.Error)).toBe(ErrorCode.TRANSPORT_BAD_MESSAGE);
      expect(JSON.parse(new TextDecoder().decode(refused.data))).toMatchObject({
        ok: false,
        error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE, message: expect.stringContaining(`is ${size} bytes; the limit is 1048576`) },
      });
    }
    expect(live.some((event) => event.type === 'run.failed')).toBe(false);
    // A request within the limit still aborts it.
    await expect(requestRunAbort(client, 'redflow', run.traceId, { reason: 'done testing' })).resolves.toMatchObject({ kind: 'aborting' });
    expect((await run.result).outcome).toMatchObject({ reason: 'aborted' });
  }, 40_000);
});
