// A `redflow serve` process running a flow whose model echoes its API key and whose tools echo an
// environment secret and a credential header: none of them reaches the run stream (SSE), the run,
// its events or the runs list. The real command (bin/redflow.js runs the compiled dist/: build
// first), a Chat Completions server speaking the wire protocol, a real HTTP server behind the tool.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { enqueueEchoConversation, expectNoSecret, secretEnv, startEchoServer, writeSecretEchoFlow, type EchoServer } from '../support/secretEcho.js';
import { call, openSse, tempDirs, type ServerPort } from './serverHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let model: FakeChatServer;
let echo: EchoServer;
let serve: ChildProcess | undefined;

beforeEach(async () => {
  model = await startFakeChatCompletionsServer();
  model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  echo = await startEchoServer();
});

afterEach(async () => {
  serve?.kill('SIGKILL');
  serve = undefined;
  await model.stop();
  await echo.stop();
});

/** The child's environment: no model, token or NATS settings of the test machine, plus the secrets. */
function serveEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|REDFLOW_|NATS_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1', ...secretEnv() };
}

/** Starts `redflow serve` on a free port; resolves with its port and what it wrote to stderr so far. */
async function startServe(cwd: string, flowsDir: string): Promise<ServerPort & { stderr: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--flows', flowsDir, '--verbose'], { cwd, env: serveEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  serve = child;
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const found = /http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (found) resolve(Number(found[1]));
    });
    child.once('close', (code) => reject(new Error(`serve exited (${code}) before printing its URL:\n${stdout}\n${stderr}`)));
  });
  return { port, stderr: () => stdout + stderr };
}

describe('redflow serve with secrets echoed by the model and the tools', () => {
  it('should redact them from the run stream, the run, its events and the runs list', async () => {
    const root = await dirs.make('redflow-serve-redaction-');
    const flowsDir = path.join(root, 'flows');
    await mkdir(flowsDir);
    await writeSecretEchoFlow(flowsDir, { modelBaseUrl: model.baseUrl, echoPort: echo.port, name: 'secret-echo' });
    enqueueEchoConversation(model);
    const server = await startServe(root, flowsDir);

    const started = await call(server, 'POST', '/api/runs', { body: { flow: 'secret-echo', input: 'echo everything' } });
    expect(started.status, started.text).toBe(201);
    const { traceId } = started.json as { traceId: string };
    const stream = await openSse(server, `/api/runs/${traceId}/stream`);
    const end = await stream.waitFor((frame) => frame.event === 'end', 20_000);
    await stream.ended;

    const streamed = stream.frames.map((frame) => frame.data ?? '').join('\n');
    expectNoSecret(streamed, 'the run stream');
    expect((JSON.parse(end.data ?? '{}') as { outcome?: { answer?: string } }).outcome?.answer).toBe('done; the key is [redacted]');
    const completed = stream.frames.filter((frame) => frame.event === 'agent-event' && frame.data?.includes('"type":"tool.completed"'));
    expect(completed).toHaveLength(3);

    const run = await call(server, 'GET', `/api/runs/${traceId}`);
    expect(run.status).toBe(200);
    expectNoSecret(run.text, 'GET /api/runs/:traceId');
    expect(run.text).toContain('done; the key is [redacted]');
    const events = await call(server, 'GET', `/api/runs/${traceId}/events`);
    expect(events.status).toBe(200);
    expectNoSecret(events.text, 'GET /api/runs/:traceId/events');
    expect((events.json as { events: unknown[] }).events.length).toBe(stream.frames.filter((frame) => frame.event === 'agent-event').length);
    const list = await call(server, 'GET', '/api/runs');
    expectNoSecret(list.text, 'GET /api/runs');
    expectNoSecret(server.stderr(), "the server's own output");
  });
});
