import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { parseReactStepRequest } from '../../src/stepService/parseReactStepRequest.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { holdStepKey } from '../../src/stepService/stepKey.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import { loadStepModels } from '../../src/stepService/stepModels.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { call } from '../server/serverHarness.js';
import { codeBlocks, readPage } from './docPages.js';

// docs/step-service.md's request bodies are requests the step service takes: the query of step 1
// (in its curl command), the tool observation of step 2, which follows the call step 1 proposed,
// and the local model's step, which runs here as written against a local OpenAI-compatible server
// standing in for Ollama.

const page = readPage('docs/step-service.md');
const blocks = codeBlocks(page);
const bodies = blocks.flatMap((block) => {
  if (block.lang === 'json' && block.code.includes('"user_query"')) return [block.code];
  const curl = block.lang === 'sh' ? /react_step[\s\S]*?-d '([\s\S]*?)'/.exec(block.code)?.[1] : undefined;
  return curl === undefined ? [] : [curl];
});
/** The models files the page writes (`cat > models.json <<'JSON' … JSON`). */
const modelsFiles = blocks.flatMap((block) => {
  const file = /cat > models\.json <<'JSON'\n([\s\S]*?)\nJSON/.exec(block.code)?.[1];
  return file === undefined ? [] : [JSON.parse(file) as { models: Record<string, Record<string, unknown>> }];
});

let fake: FakeChatServer;
let server: RedflowServer;
let root: string;
beforeAll(async () => {
  fake = await startFakeChatCompletionsServer();
  root = await mkdtemp(path.join(tmpdir(), 'redflow-doc-steps-'));
});
afterAll(async () => {
  await server?.close();
  await fake?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('the step service page (docs/step-service.md)', () => {
  it('should show a step 1 and a step 2 with a tool observation that the service reads as written, keys and all', () => {
    expect(bodies).toHaveLength(3);
    // As the server takes them: the key checked for the model it names (a hosted one here).
    const [query, observation] = bodies.slice(0, 2).map((body) => parseReactStepRequest(holdStepKey(JSON.parse(body), { servesLocally: () => false }).body));
    expect(query?.user_query).not.toBe('');
    expect(observation?.user_query).toBe('');
    const history = observation?.conversation_history ?? [];
    expect(history.at(-1)).toMatchObject({ role: 'tool_observation', toolResult: { success: true } });
    expect(history.at(-2)?.toolCall?.name).toBe('code_search');
    expect(history[0]).toMatchObject({ role: 'user', content: query?.user_query });
  });

  it('should run the local model\'s step as written: its short key taken, the observation read whole, the format line no tool', async () => {
    const local = modelsFiles.find((file) => JSON.stringify(file).includes('"ollama"'));
    expect(local).toBeDefined();
    // The page's Ollama entry, at the stand-in's address (a loopback one, as Ollama's default).
    const models = Object.fromEntries(Object.entries(local?.models ?? {}).map(([name, config]) => [name, { ...config, baseUrl: fake.baseUrl, maxRetries: 0 }]));
    const modelsFile = path.join(root, 'models.json');
    await writeFile(modelsFile, JSON.stringify({ models }));
    const runsDir = path.join(root, 'runs');
    const steps = createStepService({ logs: jsonlStepLogs(runsDir), models: await loadStepModels(modelsFile, {}) });
    server = await createRedflowServer({ flowsDir: path.join(root, 'flows'), runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, steps });
    fake.enqueue({ kind: 'completion', content: 'Final Answer: login() is in src/auth.js, line 12.' });

    const answer = await call(server, 'POST', '/api/agent/react_step', { body: JSON.parse(bodies[2] ?? '{}') as unknown });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ status: 'direct_response_provided', direct_response: 'login() is in src/auth.js, line 12.' });
    const sent = fake.requests.at(-1);
    expect(sent?.headers.authorization).toBe('Bearer ollama');
    const messages = (sent?.body as { messages: { content: string }[] }).messages;
    expect(messages.at(-1)?.content).toContain('Found: src/auth.js with login() function\n\nsrc/auth.js:12: export function login(user, password) {');
    const started = (await readJsonlLog(path.join(runsDir, 'b7d1e0c4-local-q1.jsonl'))).events[0];
    expect(started?.type === 'run.started' && started.data.agent.allowedTools).toEqual(['search_code', 'read_file']);
  });
});
