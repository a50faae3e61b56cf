// Errors a client is sent carry no internals of the server: no absolute path on its disk (a run
// log's file) and no address of a server it talks to (the model server's base URL). The full text
// goes to the server's own log. The server runs in-process, the model is a local server speaking
// OpenAI's Chat Completions protocol, and the steps go over real HTTP.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import { loadStepModels } from '../../src/stepService/stepModels.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { call, tempDirs } from './serverHarness.js';

const dirs = tempDirs();
let openai: FakeChatServer;
let server: RedflowServer;
let root: string;
let runsDir: string;
const logged: string[] = [];

beforeAll(async () => {
  openai = await startFakeChatCompletionsServer();
  root = await dirs.make('redflow-public-errors-');
  runsDir = path.join(root, 'runs');
  const modelsFile = path.join(root, 'models.json');
  await writeFile(modelsFile, JSON.stringify({ models: { 'gpt-4o': { provider: 'openai', baseUrl: openai.baseUrl, model: 'gpt-4o', maxRetries: 0 } } }));
  const steps = createStepService({ logs: jsonlStepLogs(runsDir), models: await loadStepModels(modelsFile, {}) });
  server = await createRedflowServer({ flowsDir: path.join(root, 'flows'), runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, steps, logError: (line) => logged.push(line) });
});
afterAll(async () => {
  await server?.close();
  await openai?.stop();
  await dirs.cleanup();
});

const stepBody = (session: string) => ({
  session_id: session,
  user_query: 'How is authentication implemented?',
  conversation_history: [],
  available_tools_prompt_segment: 'You have access to: code_search(query)',
  llm_config: { modelName: 'gpt-4o' },
  user_api_keys: { llmKey: 'sk-public-errors-key-3e9a1c7d' },
  max_iterations_left: 2,
});

/** The model server's address as an error would write it, in every form a client could recognise. */
const addressForms = () => [openai.baseUrl, `127.0.0.1:${openai.port}`, `localhost:${openai.port}`];

describe('errors sent to clients, without the server\'s internals', () => {
  it('answers a step whose model fails without the model server\'s address, which goes to the server\'s log', async () => {
    openai.enqueue({ kind: 'error', status: 404, message: 'no such model' });
    logged.length = 0;
    const failed = await call(server, 'POST', '/api/agent/react_step', { body: stepBody('sess-model-fails') });
    expect(failed.status, failed.text).toBe(200);
    const body = failed.json as { status: string; error: { code: string; message: string; hint?: string } };
    expect(body.status).toBe('error');
    expect(body.error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(body.error.message).toContain('no such model');
    expect(body.error.message).toContain('[server address]');
    for (const form of addressForms()) expect(failed.text).not.toContain(form);
    expect(logged.join('\n')).toContain(openai.baseUrl);
  });

  it('answers a step whose run log cannot be used with a 500 that names the log\'s file but not where it is on the server', async () => {
    await mkdir(runsDir, { recursive: true });
    await writeFile(path.join(runsDir, 'sess-corrupt-q1.jsonl'), 'this is not a log\n');
    logged.length = 0;
    const failed = await call(server, 'POST', '/api/agent/react_step', { body: stepBody('sess-corrupt') });
    expect(failed.status, failed.text).toBe(500);
    expect(failed.error?.code).toMatch(/^LOG_/);
    expect(failed.text).toContain('sess-corrupt-q1.jsonl');
    expect(failed.text).not.toContain(root);
    expect(failed.text).not.toContain(runsDir);
    // The full text, with the path, is in the server's log only.
    expect(logged.join('\n')).toContain(path.join(runsDir, 'sess-corrupt-q1.jsonl'));
  });
});
