// A cluster whose model answers with its own API key (a buggy or hostile server behind the model
// worker) and whose tools echo theirs: the key reaches only the model worker's process, and neither
// the run's stream, `redflow tail`, `redflow replay --nats`, `redflow run --nats` nor any worker's
// standard error holds it, or the tools' secrets. Real `redflow worker` processes (the built
// dist/), the nats-server on 127.0.0.1:4222, a Chat Completions server speaking the wire protocol.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SECRETS, enqueueEchoConversation, expectNoSecret, startEchoServer, writeSecretEchoFlow, type EchoServer } from '../support/secretEcho.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from './clusterSupport.js';
import { endingWithin, killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

const prefix = uniquePrefix();
const cluster = ['--nats', NATS_URL, '--prefix', prefix];
let nc: NatsConnection;
let model: FakeChatServer;
let echo: EchoServer;
let dir: string;
let flow: string;
const processes: RedflowProcess[] = [];

function start(args: readonly string[], env: Record<string, string> = {}): RedflowProcess {
  const started = startRedflow(args, env);
  processes.push(started);
  return started;
}

beforeAll(async () => {
  nc = await connectTestServer('cluster-redaction');
  model = await startFakeChatCompletionsServer();
  model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  echo = await startEchoServer();
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-cluster-redaction-')));
  flow = await writeSecretEchoFlow(dir, { modelBaseUrl: model.baseUrl, echoPort: echo.port });
});

afterAll(async () => {
  await killAll(processes);
  await model?.stop();
  await echo?.stop();
  if (nc) {
    await removePrefix(nc, prefix);
    await nc.drain();
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Every message of the prefix's trace stream, as the bytes stored. */
async function streamBytes(): Promise<string> {
  const consumer = await jetstream(nc).consumers.get(Storage.traceStream(prefix));
  let text = '';
  for (;;) {
    const batch = await consumer.fetch({ max_messages: 256, expires: 2000 });
    let got = 0;
    let pending = 1;
    for await (const message of batch) {
      got++;
      text += `${new TextDecoder().decode(message.data)}\n`;
      pending = message.info.pending;
      if (pending === 0) break;
    }
    if (got === 0 || pending === 0) return text;
  }
}

describe('secrets echoed to a cluster', () => {
  it("should stay out of the stream, tail, replay --nats, the run's output and every worker's stderr", async () => {
    // Each worker has only what its role needs: the model worker the API key, the tool worker the tools' token.
    const workers = [
      start(['worker', flow, '--role', 'core', ...cluster]),
      start(['worker', flow, '--role', 'model', ...cluster], { OPENAI_API_KEY: SECRETS.apiKey }),
      start(['worker', flow, '--role', 'tool', ...cluster], { ECHO_SERVICE_TOKEN: SECRETS.envToken }),
    ];
    await Promise.all(workers.map((worker) => worker.ready()));
    enqueueEchoConversation(model);

    const traceId = `redaction-${Date.now()}`;
    const tail = start(['tail', traceId, ...cluster]);
    let tailed = '';
    tail.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (tailed += chunk));
    await tail.waitFor(`following run ${traceId}`);

    const run = await runCli(['run', flow, '--input', 'echo everything', '--trace-id', traceId, ...cluster], { cwd: dir, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    // The secrets really were sent and echoed: redaction, not absence, keeps them out.
    expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${SECRETS.apiKey}`);
    expect(model.requests).toHaveLength(4);
    expect(echo.requests.map((headers) => headers.authorization)).toEqual([`Bearer ${SECRETS.bearer}`, `Bearer ${SECRETS.bearer}`]);
    expect(run.stdout).toContain('done; the key is [redacted]');
    expectNoSecret(run.stdout + run.stderr, 'run --nats');

    expect(await endingWithin(tail, 20_000)).toEqual({ code: 0, signal: null });
    expect(tailed).toContain('run.completed');
    expectNoSecret(tailed + tail.stderr(), 'tail');

    const stored = await streamBytes();
    expect(stored).toContain('[redacted]');
    expect(stored).toContain(traceId);
    expectNoSecret(stored, 'the trace stream');

    for (const args of [[], ['--json'], ['--steps', '--full']]) {
      const replayed = await runCli(['replay', traceId, ...args, ...cluster], { cwd: dir });
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(replayed.stdout).toContain('[redacted]');
      expectNoSecret(replayed.stdout + replayed.stderr, `replay --nats ${args.join(' ')}`);
    }

    for (const worker of workers) worker.child.kill('SIGTERM');
    for (const worker of workers) {
      expect(await endingWithin(worker, 15_000)).toEqual({ code: 0, signal: null });
      expectNoSecret(worker.stderr(), `worker stderr:\n${worker.stderr()}`);
    }
  }, 120_000);
});
