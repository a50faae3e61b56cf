// The step service over real sockets: `redflow serve --models --workspace` as a process, a local
// server speaking each provider's wire protocol (OpenAI Chat Completions, Anthropic Messages,
// both streamed), the documented workflow step by step with a SIGKILL of the server in between,
// bad requests, and the user's key searched for in everything the session left behind.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validators } from '../../src/contracts/schemas.js';
import { ErrorCode } from '../../src/errors.js';
import { keyOf, startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { CLI } from '../support/cli.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { removePrefix } from '../distributed/clusterSupport.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { tempDirs } from './serverHarness.js';

const KEY = 'sk-byok-7f3a9c2e1d-NEVER-LOG';
const dirs = tempDirs();
const children = new Set<ChildProcessWithoutNullStreams>();
let openai: FakeChatServer;
let anthropic: FakeAnthropicServer;

beforeAll(async () => {
  if (!existsSync(new URL('../../dist/stepService/reactStepService.js', import.meta.url))) throw new Error('dist/ is not built: run `npm run build` first');
  openai = await startFakeChatCompletionsServer();
  anthropic = await startFakeAnthropicServer();
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await openai?.stop();
  await anthropic?.stop();
  await dirs.cleanup();
});

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|ANTHROPIC_|REDFLOW_|NATS_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

interface Served {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  readonly output: () => string;
}

async function serve(cwd: string, nats?: { url: string; prefix: string }): Promise<Served> {
  const where = nats === undefined ? ['--runs', 'runs'] : ['--nats', nats.url, '--prefix', nats.prefix];
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...where, '--models', 'models.json', '--workspace', 'workspace', '--verbose'], {
    cwd,
    env: cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (found) resolve(found[0]);
    });
    child.once('close', (code) => reject(new Error(`serve exited (${code}):\n${out}`)));
  });
  return { url, child, output: () => out };
}

async function killHard(child: ChildProcessWithoutNullStreams): Promise<void> {
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGKILL');
  await closed;
  children.delete(child);
}

async function step(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await fetch(new URL('/api/agent/react_step', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text) as Record<string, unknown>, text };
}

async function setUp(): Promise<string> {
  const cwd = await dirs.make('redflow-react-step-');
  await mkdir(path.join(cwd, 'workspace/src'), { recursive: true });
  await writeFile(path.join(cwd, 'workspace/src/auth.js'), 'export function login(user, password) { /* bcrypt */ }\n');
  await writeFile(path.join(cwd, 'secret.txt'), 'OUTSIDE THE WORKSPACE');
  await writeFile(
    path.join(cwd, 'models.json'),
    JSON.stringify({
      models: {
        'gpt-4o': { provider: 'openai', baseUrl: openai.baseUrl, model: 'gpt-4o', maxRetries: 0 },
        'claude-sonnet-4-5': { provider: 'anthropic', baseUrl: anthropic.baseUrl, model: 'claude-sonnet-4-5', maxRetries: 0 },
      },
    }),
  );
  return cwd;
}

const firstStep = (session: string, modelName: string) => ({
  project_id: 'proj-1',
  session_id: session,
  user_query: 'How is authentication implemented?',
  conversation_history: [],
  explicit_context_paths: ['src/auth.js', '../secret.txt'],
  implicit_context: { last_focused_file_path: 'src/auth.js' },
  vector_search_results_to_include: [],
  available_tools_prompt_segment: 'You have access to: code_search(query), read_file(path)',
  llm_config: { modelName, tokenLimit: 8192, reservedOutputTokens: 1000, temperature: 0.2 },
  user_api_keys: { llmKey: KEY },
  max_iterations_left: 3,
});

/** Everything a session leaves on disk or prints: the run logs and the server's output. */
async function artifacts(cwd: string, served: readonly Served[]): Promise<string> {
  const runs = path.join(cwd, 'runs');
  const logs = await Promise.all((await readdir(runs)).map((name) => readFile(path.join(runs, name), 'utf8')));
  return [...logs, ...served.map((s) => s.output())].join('\n');
}

describe('POST /api/agent/react_step', () => {
  for (const provider of ['openai', 'anthropic'] as const) {
    it(`runs the documented workflow over ${provider}'s protocol through a SIGKILL, the key used and never kept`, async () => {
      const cwd = await setUp();
      const modelName = provider === 'openai' ? 'gpt-4o' : 'claude-sonnet-4-5';
      const proposal = 'Thought: I need to search for authentication code.\nAction: code_search(query="authentication")';
      const answer = 'Thought: The search found it.\nFinal Answer: Authentication is implemented in auth.js: login() checks the password with bcrypt.';
      if (provider === 'openai') openai.enqueue({ kind: 'completion', content: proposal }, { kind: 'completion', content: answer });
      else anthropic.enqueue({ kind: 'message', content: proposal }, { kind: 'message', content: answer });
      const server = provider === 'openai' ? openai : anthropic;
      const before = server.requests.length;

      const first = await serve(cwd);
      const one = await step(first.url, firstStep(`sess-${provider}`, modelName));
      expect(one.status, one.text).toBe(200);
      expect(validators.reactStepResponse(one.json), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
      expect(one.json).toMatchObject({
        status: 'action_proposed',
        thought: 'I need to search for authentication code.',
        action_details: { tool_name: 'code_search', tool_args: { query: 'authentication' }, raw_action_string: 'Action: code_search(query="authentication")' },
        direct_response: null,
        iterations_remaining: 2,
      });
      // The model was asked with the workspace's file, and nothing from outside it.
      const asked = server.requests[before]?.rawBody ?? '';
      expect(asked).toContain('bcrypt');
      expect(asked).not.toContain('OUTSIDE THE WORKSPACE');
      expect(asked).toContain('../secret.txt left out: outside the workspace');
      expect(keyOf(server.requests[before]?.headers ?? {})).toBe(KEY);
      // The step's llm_config set the call: its temperature, and its reservedOutputTokens as the answer's limit.
      expect(JSON.parse(asked)).toMatchObject({ temperature: 0.2, max_tokens: 1000 });

      // The server dies between the steps: the session's run waits in its log, not in the process.
      await killHard(first.child);
      const second = await serve(cwd);
      const history = [...(one.json.updated_conversation_history as unknown[]), { role: 'tool_observation', content: 'Found: src/auth.js login()', toolResult: { success: true, result: 'src/auth.js: login() uses bcrypt' } }];
      const two = await step(second.url, { ...firstStep(`sess-${provider}`, modelName), user_query: '', conversation_history: history, max_iterations_left: 2 });
      expect(two.status, two.text).toBe(200);
      expect(two.json).toMatchObject({
        status: 'direct_response_provided',
        direct_response: 'Authentication is implemented in auth.js: login() checks the password with bcrypt.',
        action_details: null,
      });
      expect(server.requests[before + 1]?.rawBody).toContain('login() uses bcrypt');

      // The session is a run like any other: its log replays.
      const replay = await fetch(new URL(`/api/runs/sess-${provider}-q1`, second.url));
      expect(await replay.json()).toMatchObject({ traceId: `sess-${provider}-q1`, status: 'finished', outcome: { status: 'done' } });

      const everything = (await artifacts(cwd, [first, second])) + one.text + two.text;
      expect(everything).not.toContain(KEY);
      await killHard(second.child);
    });
  }

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`with --nats, over ${provider}'s protocol, keeps sessions in JetStream so another server of the cluster takes the next step`, async () => {
      const cwd = await setUp();
      const prefix = uniquePrefix();
      const nc = await connectTestServer('react-step-e2e');
      try {
        const modelName = provider === 'openai' ? 'gpt-4o' : 'claude-sonnet-4-5';
        if (provider === 'openai') openai.enqueue({ kind: 'completion', content: 'Action: code_search(query="auth")' }, { kind: 'completion', content: 'Final Answer: In auth.js.' });
        else anthropic.enqueue({ kind: 'message', content: 'Action: code_search(query="auth")' }, { kind: 'message', content: 'Final Answer: In auth.js.' });
        const first = await serve(cwd, { url: NATS_URL, prefix });
        const one = await step(first.url, firstStep('sess-nats', modelName));
        expect(one.json.status, one.text).toBe('action_proposed');
        await killHard(first.child);
        const other = await serve(cwd, { url: NATS_URL, prefix });
        const history = [...(one.json.updated_conversation_history as unknown[]), { role: 'tool_observation', content: 'auth.js', toolResult: { success: true, result: 'auth.js' } }];
        const two = await step(other.url, { ...firstStep('sess-nats', modelName), user_query: '', conversation_history: history });
        expect(two.json).toMatchObject({ status: 'direct_response_provided', direct_response: 'In auth.js.' });
        // Each step's model call went to the provider named, from the server taking the step, with the step's key.
        expect(keyOf((provider === 'openai' ? openai : anthropic).requests.at(-1)?.headers ?? {})).toBe(KEY);
        const store = await openJetStreamEventStore(nc, { prefix });
        const { events, problems } = await store.read('sess-nats-q1');
        await store.close();
        expect(problems).toEqual([]);
        expect(events.map((event) => event.type)).toEqual([
          'run.started', 'model.requested', 'model.answered', 'tool.requested', 'run.resumed', 'tool.completed', 'model.requested', 'model.answered', 'run.completed',
        ]);
        expect(JSON.stringify(events) + first.output() + other.output()).not.toContain(KEY);
        await killHard(other.child);
      } finally {
        await removePrefix(nc, prefix);
        await nc.close();
      }
    });
  }

  it('keeps the key out of everything when the client also puts it in its query, its history, an id, the model name or a field name', async () => {
    const cwd = await setUp();
    const served = await serve(cwd);
    const before = openai.requests.length;
    openai.enqueue({ kind: 'completion', content: 'Action: code_search(query="auth")' }, { kind: 'completion', content: `Final Answer: I will not repeat ${KEY}.` });
    const pasted = await step(served.url, {
      ...firstStep('s-pasted', 'gpt-4o'),
      user_query: `My key is ${KEY}, how is authentication implemented?`,
      conversation_history: [{ role: 'user', content: `earlier: ${KEY}` }, { role: 'assistant', content: 'Noted.' }],
    });
    expect(pasted.json.status, pasted.text).toBe('action_proposed');
    const observed = [
      ...(pasted.json.updated_conversation_history as unknown[]),
      { role: 'tool_observation', content: `found ${KEY}`, toolResult: { success: true, result: { [KEY]: KEY } } },
    ];
    const next = await step(served.url, { ...firstStep('s-pasted', 'gpt-4o'), user_query: '', conversation_history: observed });
    expect(next.json.status, next.text).toBe('direct_response_provided');
    // As the session id, the model's name and a field's name, it is refused without being repeated.
    const asSession = await step(served.url, { ...firstStep(KEY, 'gpt-4o') });
    expect(asSession.status).toBe(400);
    const asModel = await step(served.url, firstStep('s-model', KEY));
    expect(asModel.status).toBe(400);
    const asField = await step(served.url, { ...firstStep('s-field', 'gpt-4o'), user_api_keys: { llmKey: KEY, [KEY]: KEY } });
    expect(asField.status).toBe(400);

    expect(keyOf(openai.requests[before]?.headers ?? {})).toBe(KEY);
    const sentToModel = openai.requests.slice(before).map((request) => request.rawBody).join('\n');
    const files = await readdir(path.join(cwd, 'runs'));
    const answers = [pasted, next, asSession, asModel, asField].map((answer) => answer.text).join('\n');
    expect(files.join('\n') + (await artifacts(cwd, [served])) + answers + sentToModel).not.toContain(KEY);
    await killHard(served.child);
  });

  it('answers bad requests with clear errors: every wrong field, an unknown model, a conflicting history, a body too large', async () => {
    const cwd = await setUp();
    const served = await serve(cwd);
    const bad = await step(served.url, { ...firstStep('s-bad', 'gpt-4o'), session_id: 'a b', llm_config: { temperature: 9 }, extra: 1 });
    expect(bad.status).toBe(400);
    expect((bad.json.fields as { path: string }[]).map((field) => field.path).sort()).toEqual(['/extra', '/llm_config/modelName', '/llm_config/temperature', '/session_id']);

    const unknown = await step(served.url, firstStep('s-unknown', 'gpt-9'));
    expect(unknown.status).toBe(400);
    expect((unknown.json.error as { code: string }).code).toBe(ErrorCode.REACT_STEP_MODEL_UNKNOWN);

    // A query that, with the system prompt, does not fit the window the client gave.
    const long = await step(served.url, { ...firstStep('s-long', 'gpt-4o'), user_query: 'word '.repeat(2000), llm_config: { modelName: 'gpt-4o', tokenLimit: 1000, reservedOutputTokens: 100 } });
    expect(long.status, long.text).toBe(400);
    expect((long.json.error as { code: string }).code).toBe(ErrorCode.CONTEXT_BUDGET_EXCEEDED);

    // Anthropic takes temperatures from 0 to 1 only.
    const hot = await step(served.url, { ...firstStep('s-hot', 'claude-sonnet-4-5'), llm_config: { modelName: 'claude-sonnet-4-5', temperature: 1.5 } });
    expect(hot.status, hot.text).toBe(400);
    expect(hot.json.error).toMatchObject({ code: ErrorCode.MODEL_CONFIG_INVALID, path: '/llm_config', message: expect.stringContaining('temperature') });

    openai.enqueue({ kind: 'completion', content: 'Action: code_search(query="auth")' });
    const one = await step(served.url, firstStep('s-conflict', 'gpt-4o'));
    expect(one.json.status).toBe('action_proposed');
    const forged = (one.json.updated_conversation_history as Record<string, unknown>[]).map((turn) => (turn.toolCall ? { ...turn, toolCall: { name: 'read_file', parameters: { path: '/etc/passwd' } } } : turn));
    const conflict = await step(served.url, { ...firstStep('s-conflict', 'gpt-4o'), user_query: '', conversation_history: [...forged, { role: 'tool_observation', content: 'x' }] });
    expect(conflict.status).toBe(409);
    expect((conflict.json.error as { code: string }).code).toBe(ErrorCode.REACT_STEP_HISTORY_CONFLICT);

    const huge = await step(served.url, { ...firstStep('s-huge', 'gpt-4o'), vector_search_results_to_include: Array.from({ length: 50 }, () => 'x'.repeat(99_000)) });
    expect(huge.status).toBe(413);

    openai.enqueue({ kind: 'error', status: 401, message: `Incorrect API key provided: ${KEY}` });
    const refused = await step(served.url, firstStep('s-refused', 'gpt-4o'));
    expect(refused.status).toBe(200);
    expect(refused.json.status).toBe('error');
    expect(refused.text).not.toContain(KEY);
    expect(await artifacts(cwd, [served])).not.toContain(KEY);
    await killHard(served.child);
  });
});
