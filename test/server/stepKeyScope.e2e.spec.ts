// A step's own key (user_api_keys.llmKey) is a secret of that request only. Held process-wide, a
// hostile "key" equal to a word of someone else's answer (or to another user's session id) would
// be cut out of every concurrent request's answer and log. The server runs in-process, the model
// is a local server speaking OpenAI's Chat Completions protocol, and the steps go over real HTTP.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import { loadStepModels } from '../../src/stepService/stepModels.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { call, tempDirs } from './serverHarness.js';

/** A word long enough to pass for a key, in the honest user's answer: the hostile step sends it as its "key". */
const WORD = 'Supercalifragilisticexpialidocious';

const dirs = tempDirs();
let openai: FakeChatServer;
let server: RedflowServer;
let runsDir: string;

beforeAll(async () => {
  openai = await startFakeChatCompletionsServer();
  const root = await dirs.make('redflow-step-key-scope-');
  runsDir = path.join(root, 'runs');
  const modelsFile = path.join(root, 'models.json');
  await writeFile(
    modelsFile,
    JSON.stringify({
      models: {
        'gpt-4o': { provider: 'openai', baseUrl: openai.baseUrl, model: 'gpt-4o', maxRetries: 0 },
        // OpenAI's own API: never called here, every step naming it is refused before any call.
        remote: { provider: 'openai', model: 'gpt-4o', maxRetries: 0 },
        // A vLLM server on this machine, as a local user runs one (here the fake, on 127.0.0.1).
        local: { provider: 'vllm', baseUrl: openai.baseUrl, model: 'llama3.1', maxRetries: 0 },
      },
    }),
  );
  const steps = createStepService({ logs: jsonlStepLogs(runsDir), models: await loadStepModels(modelsFile, {}) });
  server = await createRedflowServer({ flowsDir: path.join(root, 'flows'), runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, steps });
});
afterAll(async () => {
  await server?.close();
  await openai?.stop();
  await dirs.cleanup();
});

const stepBody = (session: string, llmKey: string, modelName = 'gpt-4o') => ({
  session_id: session,
  user_query: 'Which word is the longest you know?',
  conversation_history: [],
  available_tools_prompt_segment: 'You have access to: code_search(query)',
  llm_config: { modelName },
  user_api_keys: { llmKey },
  max_iterations_left: 2,
});

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a step\'s key is a secret of its own request', () => {
  it('leaves a concurrent request\'s answer and log intact when a hostile key equals a word of it, and redacts it from the hostile request\'s own', async () => {
    const answer = `Thought: I know it.\nFinal Answer: The longest word I know is ${WORD}.`;
    // The hostile step's model call is held while the honest one is asked and answered.
    openai.enqueue({ kind: 'delay', ms: 1_500, then: { kind: 'completion', content: answer } }, { kind: 'completion', content: answer });
    const before = openai.requests.length;

    let hostileDone = false;
    const hostile = call(server, 'POST', '/api/agent/react_step', { body: stepBody('sess-hostile', WORD) }).finally(() => (hostileDone = true));
    await until(() => openai.requests.length > before);
    const honest = await call(server, 'POST', '/api/agent/react_step', { body: stepBody('sess-honest', 'sk-honest-user-key-5c0a9e3f7b') });
    // The two were under way together: the hostile key was live while the honest answer was written.
    expect(hostileDone).toBe(false);

    expect(honest.status, honest.text).toBe(200);
    expect(honest.json).toMatchObject({ status: 'direct_response_provided', direct_response: `The longest word I know is ${WORD}.` });
    expect(await readFile(path.join(runsDir, 'sess-honest-q1.jsonl'), 'utf8')).toContain(WORD);

    const own = await hostile;
    expect(own.status, own.text).toBe(200);
    expect(own.json).toMatchObject({ status: 'direct_response_provided', direct_response: 'The longest word I know is [redacted].' });
    expect(own.text).not.toContain(WORD);
    expect(await readFile(path.join(runsDir, 'sess-hostile-q1.jsonl'), 'utf8')).not.toContain(WORD);
    // The provider was sent each step's own key.
    expect(openai.requests[before]?.headers.authorization).toBe(`Bearer ${WORD}`);
  });

  it('refuses a key that cannot be a provider\'s with 400 HTTP_BODY_INVALID naming the field, before any model call', async () => {
    const before = openai.requests.length;
    for (const key of ['sk-short', 'ollama', 'sk-a key with spaces-0123456789', 'sk-line\nbreak-0123456789abcdef']) {
      const refused = await call(server, 'POST', '/api/agent/react_step', { body: stepBody('sess-bad-key', key, 'remote') });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.error).toMatchObject({ code: ErrorCode.HTTP_BODY_INVALID, path: '/user_api_keys/llmKey' });
      expect((refused.json as { fields?: unknown }).fields).toEqual([{ path: '/user_api_keys/llmKey', message: expect.any(String) as unknown }]);
      expect(refused.text).not.toContain(key.slice(0, 8));
    }
    expect(openai.requests.length).toBe(before);
  });

  it('takes a local server\'s short key (vLLM\'s --api-key, Ollama\'s "ollama") for a model served on this machine, and sends it', async () => {
    openai.enqueue({ kind: 'completion', content: 'Final Answer: Ollama runs models locally.' });
    const before = openai.requests.length;
    const taken = await call(server, 'POST', '/api/agent/react_step', { body: { ...stepBody('sess-local-key', 'ollama', 'local'), user_query: 'What does ollama do?' } });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.json).toMatchObject({ status: 'direct_response_provided', direct_response: 'Ollama runs models locally.' });
    expect(openai.requests[before]?.headers.authorization).toBe('Bearer ollama');
    // A key as short as a word is not cut out of the user's own question.
    expect(JSON.stringify(openai.requests[before]?.body)).toContain('What does ollama do?');
    const spaced = await call(server, 'POST', '/api/agent/react_step', { body: stepBody('sess-local-key-2', 'oll ama', 'local') });
    expect(spaced.status, spaced.text).toBe(400);
    expect(spaced.error).toMatchObject({ code: ErrorCode.HTTP_BODY_INVALID, path: '/user_api_keys/llmKey' });
  });
});
