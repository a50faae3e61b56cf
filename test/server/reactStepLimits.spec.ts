// The step route over real HTTP with what an attacker sends: a history as deep as JSON.parse
// takes. Refused with a coded 400 at the turn, before the session's log exists.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelActor } from '../../src/actors/model.js';
import { ErrorCode } from '../../src/errors.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import { call, tempDirs } from './serverHarness.js';

const dirs = tempDirs();
let server: RedflowServer;
let runsDir: string;

beforeAll(async () => {
  const root = await dirs.make('redflow-step-limits-');
  runsDir = path.join(root, 'runs');
  const model = (): Promise<ModelActor> => Promise.resolve({ kind: 'scripted', complete: () => Promise.resolve({ text: 'Final Answer: done', attempts: 1 }) });
  const steps = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
  server = await createRedflowServer({ flowsDir: path.join(root, 'flows'), runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, steps });
});
afterAll(async () => {
  await server?.close();
  await dirs.cleanup();
});

describe('POST /api/agent/react_step with a history past the limits', () => {
  it('answers tool call parameters nested 3,000 deep with 400 REACT_STEP_HISTORY_INVALID at the turn, leaving no log', async () => {
    const deep = `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`;
    const text = `{"session_id":"sess-deep","user_query":"","llm_config":{"modelName":"m"},
      "available_tools_prompt_segment":"You have access to: code_search(query)",
      "conversation_history":[{"role":"user","content":"q"},
        {"role":"assistant","content":"","toolCall":{"name":"code_search","parameters":${deep}}},
        {"role":"tool_observation","content":"found"}]}`;
    const answer = await call(server, 'POST', '/api/agent/react_step', { rawBody: text, headers: { 'content-type': 'application/json' } });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.error).toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID, path: '/conversation_history/1/toolCall/parameters' });
    expect(await readdir(runsDir).catch(() => [])).toEqual([]);
  });

  it('answers an earlier query\'s observation nested 100,000 deep with 400 at its turn, leaving no log, where the answer echoing it failed (500)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const text = `{"session_id":"sess-deep-earlier","user_query":"next question","llm_config":{"modelName":"m"},
      "available_tools_prompt_segment":"You have access to: code_search(query)",
      "conversation_history":[{"role":"user","content":"q"},
        {"role":"assistant","content":"","toolCall":{"name":"code_search","parameters":{}}},
        {"role":"tool_observation","content":"found","toolResult":{"success":true,"result":${deep}}},
        {"role":"assistant","content":"done"}]}`;
    const answer = await call(server, 'POST', '/api/agent/react_step', { rawBody: text, headers: { 'content-type': 'application/json' } });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.error).toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID, path: '/conversation_history/2/toolResult' });
    expect(await readdir(runsDir).catch(() => [])).toEqual([]);
  });
});
