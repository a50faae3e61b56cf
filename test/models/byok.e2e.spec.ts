import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import type { RecordedRequest } from '../support/fakeModelServer.js';

// "Bring your own key": a run started with a key of its own (runFlowFile's modelApiKey, what an
// HTTP endpoint hands over from its request) sends that key to the model server and writes it
// nowhere: not in the log, the events, stdout, stderr or the error of a call whose server echoes it.

/** The caller's key. Its name says nothing secret, so no environment rule could be what hides it. */
const USER_KEY = 'byok-user-4b9d2f7e1a6c8035';
/** The key in the environment, which the run must not use. */
const ENV_KEY = 'sk-env-not-this-one-5e8c1d';

const TOOL_CALL = JSON.stringify({ action: 'tool', tool: 'calculator', input: { operation: 'multiply', a: 12.5, b: 8 }, confidence: 0.8 });
/** A final answer that quotes the key, as a hostile or buggy server might. */
const ECHOED_FINAL = JSON.stringify({ action: 'final', message: `100 (you called me with ${USER_KEY})`, confidence: 0.95 });

/**
 * The child process: reads the key from stdin, runs the flow with it through the package's
 * `runFlowFile`, prints every event and then the result on stdout, and any thrown error on stderr.
 */
const CHILD = `
import { runFlowFile } from ${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist', 'index.js')).href)};
let key = '';
for await (const chunk of process.stdin) key += chunk;
const [flowPath, logPath] = process.argv.slice(1);
try {
  const run = await runFlowFile({ flowPath, logPath, input: 'what is 12.5 * 8?', modelApiKey: key.trim(), allowFiles: [${JSON.stringify(path.join(REPO_ROOT, 'examples'))}], onEvent: (event) => console.log(JSON.stringify(event)) });
  const result = await run.finished();
  console.log(JSON.stringify(result));
  console.error('run ended', result.outcome.status, JSON.stringify(result.outcome.error ?? null));
} catch (error) {
  console.error('run failed to start:', error.stack ?? String(error));
  process.exitCode = 1;
}
`;

interface ChildResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runWithKey(flowPath: string, logPath: string, cwd: string): Promise<ChildResult> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !/^(OPENAI_|ANTHROPIC_|REDFLOW_)/.test(name)) env[name] = value;
  Object.assign(env, { OPENAI_API_KEY: ENV_KEY, ANTHROPIC_API_KEY: ENV_KEY, NO_COLOR: '1' });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, flowPath, logPath], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(USER_KEY);
  });
}

/** Every file the runs left in `dir` (logs, anything else), as text. */
async function filesIn(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, file)] = await readFile(file, 'utf8');
  }
  return files;
}

function keyOf(request: RecordedRequest | undefined): string | undefined {
  const header = request?.headers['x-api-key'] ?? request?.headers.authorization;
  return typeof header === 'string' ? header.replace(/^Bearer\s+/i, '') : undefined;
}

let dir: string;
let openai: FakeChatServer;
let anthropic: FakeAnthropicServer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-byok-'));
  [openai, anthropic] = await Promise.all([startFakeChatCompletionsServer(), startFakeAnthropicServer()]);
  const example = JSON.parse(await readFile(path.join(REPO_ROOT, 'examples', 'openai-agent', 'anthropic.json'), 'utf8')) as {
    nodes: { id: string; type: string; config?: Record<string, unknown> }[];
  };
  for (const [name, config] of [
    ['openai', { provider: 'openai', model: 'test-model', baseUrl: openai.baseUrl, maxRetries: 0 }],
    ['anthropic', { provider: 'anthropic', model: 'claude-test', baseUrl: anthropic.baseUrl, maxRetries: 0 }],
  ] as const) {
    const flow = structuredClone(example);
    for (const node of flow.nodes) {
      if (node.type === 'model.llm') node.config = config;
      if (node.type === 'tool.module') node.config = { module: path.join(REPO_ROOT, 'examples', 'openai-agent', 'tools', 'calculator.ts') };
    }
    await writeFile(path.join(dir, `${name}.json`), JSON.stringify(flow));
  }
});

afterAll(async () => {
  await Promise.all([openai?.stop(), anthropic?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

/** What a case does with its provider's server. */
interface ProviderCase {
  readonly provider: 'openai' | 'anthropic';
  /** Clears the server, then queues the two answers of a successful run (a tool call, then a final answer quoting the key). */
  queueSuccess(): void;
  /** Queues a 401 whose message quotes the key the request carried. */
  queueEchoedRejection(): void;
  requests(): readonly RecordedRequest[];
}

const cases: readonly ProviderCase[] = [
  {
    provider: 'openai',
    queueSuccess: () => {
      openai.reset();
      openai.enqueue({ kind: 'completion', content: TOOL_CALL }, { kind: 'completion', content: ECHOED_FINAL });
    },
    queueEchoedRejection: () => openai.enqueue({ kind: 'error', status: 401, message: `Incorrect API key provided: ${USER_KEY}.` }),
    requests: () => openai.requests,
  },
  {
    provider: 'anthropic',
    queueSuccess: () => {
      anthropic.reset();
      anthropic.enqueue({ kind: 'message', content: TOOL_CALL }, { kind: 'message', content: ECHOED_FINAL });
    },
    queueEchoedRejection: () => anthropic.enqueue({ kind: 'error', status: 401, message: 'invalid x-api-key', echoKey: true }),
    requests: () => anthropic.requests,
  },
];

describe.each(cases)('a run with its own key, $provider', (providerCase) => {
  it('should send the run\'s key to the model server, and leave it out of the log, the events, stdout, stderr and the echoed errors', async () => {
    const { provider } = providerCase;
    const flowPath = path.join(dir, `${provider}.json`);
    providerCase.queueSuccess();
    const done = await runWithKey(flowPath, path.join(dir, 'logs', `${provider}-done.jsonl`), dir);
    providerCase.queueEchoedRejection();
    const failed = await runWithKey(flowPath, path.join(dir, 'logs', `${provider}-failed.jsonl`), dir);

    // The runs did what they were told, so the checks below look at real artifacts.
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain('run ended done');
    expect(done.stdout).toContain('you called me with [redacted]');
    expect(failed.stderr).toContain('MODEL_REQUEST_REJECTED');
    expect(failed.stdout).toContain('[redacted]');

    // The key went where it belongs: on every model request, instead of the environment's.
    expect(providerCase.requests()).toHaveLength(3);
    for (const request of providerCase.requests()) expect(keyOf(request)).toBe(USER_KEY);

    const files = await filesIn(dir);
    expect(Object.keys(files)).toEqual(expect.arrayContaining([path.join('logs', `${provider}-done.jsonl`), path.join('logs', `${provider}-failed.jsonl`)]));
    const artifacts = { 'done stdout': done.stdout, 'done stderr': done.stderr, 'failed stdout': failed.stdout, 'failed stderr': failed.stderr, ...files };
    for (const [name, text] of Object.entries(artifacts)) expect(text.includes(USER_KEY), `${name} shows the key`).toBe(false);
  });
});
