import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otelTraceIdOf } from '../../src/telemetry/traceContext.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlpReceiver.js';

// `REDFLOW_OTEL` on the real command (dist/): an embedded `redflow run` exports its spans before
// it exits, however long the SDK would have waited; a wrong value is a usage error; without an
// SDK the command says that nothing is exported.

const FLOW = path.join(REPO_ROOT, 'examples', 'openai-agent', 'flow.json');
const SETUP = pathToFileURL(path.join(REPO_ROOT, 'deploy', 'otel', 'setup.mjs')).href;
let model: FakeChatServer;
let receiver: OtlpReceiver;
let dir: string;

beforeAll(async () => {
  model = await startFakeChatCompletionsServer();
  receiver = await startOtlpReceiver();
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-otel-cli-'));
});

afterAll(async () => {
  await model.stop();
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

const modelEnv = () => ({ OPENAI_BASE_URL: model.baseUrl, REDFLOW_MODEL: 'test-model', OPENAI_API_KEY: 'sk-test-otel-cli-7d6e5f' });

describe('REDFLOW_OTEL on the redflow command', () => {
  it('should export the spans of an embedded run before the command exits', async () => {
    model.enqueue(
      { kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'calculator', input: { operation: 'add', a: 2, b: 3 }, confidence: 0.8 }) },
      { kind: 'completion', content: JSON.stringify({ action: 'final', message: '2 + 3 = 5', confidence: 0.95 }) },
    );
    const run = await runCli(['run', FLOW, '--input', 'what is 2 + 3?', '--json'], {
      cwd: dir,
      env: {
        ...modelEnv(),
        REDFLOW_OTEL: '1',
        NODE_OPTIONS: `--import ${SETUP}`,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'redflow-cli',
        // Far beyond the command's life: only the flush at exit can send the spans.
        OTEL_BSP_SCHEDULE_DELAY: '600000',
      },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('no OpenTelemetry SDK');
    const { traceId } = JSON.parse(run.stdout) as { traceId: string };
    const spans = receiver.spans.filter((span) => span.traceId === otelTraceIdOf(traceId));
    expect(spans.map((span) => span.name).sort()).toEqual(['chat test-model', 'chat test-model', 'execute_tool calculator', 'invoke_agent openai-agent']);
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['redflow-cli']));
    // Its metrics were flushed too.
    expect(receiver.points.filter((point) => point.service === 'redflow-cli' && point.metric === 'redflow.runs.started').map((point) => point.value)).toEqual([1]);
  }, 30_000);

  it('should leave metrics out with OTEL_METRICS_EXPORTER=none, as deploy/otel/setup.mjs reads it', async () => {
    model.enqueue({ kind: 'completion', content: JSON.stringify({ action: 'final', message: 'hello', confidence: 0.95 }) });
    const env = { ...modelEnv(), REDFLOW_OTEL: '1', NODE_OPTIONS: `--import ${SETUP}`, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'redflow-traces-only' };
    const run = await runCli(['run', FLOW, '--input', 'hi', '--json'], { cwd: dir, env: { ...env, OTEL_METRICS_EXPORTER: 'none' } });
    expect(run.code, run.stderr).toBe(0);
    expect(receiver.spans.filter((span) => span.service === 'redflow-traces-only').map((span) => span.name).sort()).toEqual(['chat test-model', 'invoke_agent openai-agent']);
    expect(receiver.points.filter((point) => point.service === 'redflow-traces-only')).toEqual([]);
  }, 30_000);

  it('should say so when no OpenTelemetry SDK is registered, and run all the same', async () => {
    model.enqueue({ kind: 'completion', content: JSON.stringify({ action: 'final', message: 'hello', confidence: 0.95 }) });
    const run = await runCli(['run', FLOW, '--input', 'hi'], { cwd: dir, env: { ...modelEnv(), REDFLOW_OTEL: '1' } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('REDFLOW_OTEL is set, but no OpenTelemetry SDK is registered in this process');
  }, 30_000);

  it('should say DEPENDENCY_MISSING (exit 69) with the npm install when @opentelemetry/api cannot be found', async () => {
    // The command as a package whose node_modules has everything but @opentelemetry (as pnpm's
    // strict layout leaves it when the project did not install the peer).
    const pkg = path.join(dir, 'without-otel');
    await mkdir(path.join(pkg, 'node_modules'), { recursive: true });
    await cp(path.join(REPO_ROOT, 'dist'), path.join(pkg, 'dist'), { recursive: true });
    await cp(path.join(REPO_ROOT, 'bin'), path.join(pkg, 'bin'), { recursive: true });
    await cp(path.join(REPO_ROOT, 'schemas'), path.join(pkg, 'schemas'), { recursive: true });
    await cp(path.join(REPO_ROOT, 'package.json'), path.join(pkg, 'package.json'));
    for (const entry of await readdir(path.join(REPO_ROOT, 'node_modules'))) {
      if (entry !== '@opentelemetry') await symlink(path.join(REPO_ROOT, 'node_modules', entry), path.join(pkg, 'node_modules', entry));
    }
    const command = (env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(process.execPath, [path.join(pkg, 'bin', 'redflow.js'), 'validate', FLOW], { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env } }, (error, _stdout, stderr) =>
          resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? null), stderr }),
        );
      });
    // Without telemetry the package does without it.
    expect((await command({})).code).toBe(0);
    const asked = await command({ REDFLOW_OTEL: '1' });
    expect(asked.code).toBe(69);
    expect(asked.stderr).toContain("DEPENDENCY_MISSING: telemetry needs the package '@opentelemetry/api', which is not installed");
    expect(asked.stderr).toContain('hint: npm install @opentelemetry/api');
  }, 60_000);

  it('should refuse a value of REDFLOW_OTEL it does not know (exit 64)', async () => {
    const run = await runCli(['validate', FLOW], { cwd: dir, env: { REDFLOW_OTEL: 'yes please' } });
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('CLI_USAGE: REDFLOW_OTEL is "yes please"');
    expect(run.stderr).toContain('hint: set REDFLOW_OTEL=1');
  });
});
