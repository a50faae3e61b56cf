// Secrets echoed back by a model (its API key, through a buggy or hostile proxy) and by tools (an
// environment variable, a credential header) stay out of everything `redflow run` and `redflow
// replay` write: the log file's bytes, stdout and stderr. The real command (bin/redflow.js runs the
// compiled dist/: build first), a Chat Completions server speaking the wire protocol, a real HTTP
// server behind the tool.
import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SECRETS, enqueueEchoConversation, expectNoSecret, secretEnv, startEchoServer, writeSecretEchoFlow, type EchoServer } from '../support/secretEcho.js';

let model: FakeChatServer;
let echo: EchoServer;
let dir: string;

beforeEach(async () => {
  model = await startFakeChatCompletionsServer();
  model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  echo = await startEchoServer();
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-redaction-')));
});

afterEach(async () => {
  await model.stop();
  await echo.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('secrets echoed by the model and the tools', () => {
  it('should be redacted from the log file, the answer, stderr and the replay', async () => {
    const flow = await writeSecretEchoFlow(dir, { modelBaseUrl: model.baseUrl, echoPort: echo.port });
    enqueueEchoConversation(model);

    const run = await runCli(['run', flow, '--input', 'echo everything'], { cwd: dir, env: secretEnv() });
    expect(run.code, run.stderr).toBe(0);
    // The secrets really were sent and echoed: redaction, not absence, keeps them out.
    expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${SECRETS.apiKey}`);
    expect(echo.requests.map((headers) => headers.authorization)).toEqual([`Bearer ${SECRETS.bearer}`, `Bearer ${SECRETS.bearer}`]);
    expect(run.stdout.trim()).toBe('done; the key is [redacted]');
    expectNoSecret(run.stdout, 'stdout');
    expectNoSecret(run.stderr, 'stderr');

    const [logName] = await readdir(path.join(dir, '.redflow', 'runs'));
    const logPath = path.join(dir, '.redflow', 'runs', logName as string);
    // tool.http sent each call's idempotency key: <traceId>:<iteration>.
    const traceId = (logName as string).replace(/\.jsonl$/, '');
    expect(echo.requests.map((headers) => headers['idempotency-key'])).toEqual([`${traceId}:2`, `${traceId}:3`]);
    const bytes = await readFile(logPath, 'utf8');
    expectNoSecret(bytes, 'the log file');
    const events = bytes
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line.slice(line.indexOf(' ') + 1)) as { type: string; data: Record<string, unknown> });
    const completed = events.filter((event) => event.type === 'tool.completed').map((event) => JSON.stringify(event.data));
    expect(completed).toHaveLength(3);
    expect(completed[0]).toContain('"token":"[redacted]"');
    expect(completed[1]).toContain('"authorization":"[redacted]"');
    expect(completed[2]).toContain('authorization=[redacted]');

    // Replayed by a process that knows none of the secrets: the log itself holds none.
    const replay = await runCli(['replay', logPath], { cwd: dir });
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('answer: done; the key is [redacted]');
    expectNoSecret(replay.stdout + replay.stderr, 'replay');
    const replayJson = await runCli(['replay', logPath, '--json'], { cwd: dir });
    expect(replayJson.code, replayJson.stderr).toBe(0);
    expectNoSecret(replayJson.stdout + replayJson.stderr, 'replay --json');
  });

  it('should be redacted from the envelope that run --json prints', async () => {
    const flow = await writeSecretEchoFlow(dir, { modelBaseUrl: model.baseUrl, echoPort: echo.port });
    enqueueEchoConversation(model);
    const run = await runCli(['run', flow, '--input', 'echo everything', '--json'], { cwd: dir, env: secretEnv() });
    expect(run.code, run.stderr).toBe(0);
    expectNoSecret(run.stdout + run.stderr, 'run --json');
    const { outcome, envelope } = JSON.parse(run.stdout) as { outcome: { answer: string }; envelope: { tools: { history: unknown[] } } };
    expect(outcome.answer).toBe('done; the key is [redacted]');
    expect(envelope.tools.history).toHaveLength(3);
  });
});
