// The step protocol's own example, as a client sends it: a tool list in prose ending with a format
// line, and a tool observation with both a text (`content`) and the tool's result. The model is
// offered the listed tools only, and reads the observation the client sent, all of it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { REDACTED, registerSecret } from '../../src/secrets/secrets.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import type { ReactStepRequest } from '../../src/stepService/reactStepTypes.js';

const TOOLS = [
  'You have access to the following tools:',
  '- code_search(query="search terms") - Search for code matching the query',
  '- read_file(path="file/path") - Read the contents of a specific file',
  'Format: Action: tool_name(param="value")',
].join('\n');

function playing(answers: string[]) {
  const seen: ModelRequest[] = [];
  const model = (): Promise<ModelActor> =>
    Promise.resolve({
      kind: 'playing',
      complete: (request: ModelRequest) => {
        seen.push(request);
        return Promise.resolve({ text: answers.shift() ?? 'Final Answer: no answer left', attempts: 1 });
      },
    });
  return { model, seen };
}

let runsDir: string;
beforeEach(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-step-example-'));
});
afterEach(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

const query: ReactStepRequest = {
  session_id: 'sess-x',
  user_query: 'How is authentication implemented?',
  conversation_history: [],
  available_tools_prompt_segment: TOOLS,
  llm_config: { modelName: 'm' },
  max_iterations_left: 3,
};

describe('the step protocol\'s own example', () => {
  it('offers the listed tools only: the format line\'s tool_name is no tool, and an action naming it is not proposed', async () => {
    const { model } = playing(['Action: tool_name(param="value")', 'Final Answer: I cannot use that.']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    const answer = await service.step(query);
    expect(answer.action_details?.tool_name).not.toBe('tool_name');
    const { events } = await readJsonlLog(path.join(runsDir, 'sess-x-q1.jsonl'));
    const started = events[0];
    expect(started?.type === 'run.started' && started.data.agent.allowedTools).toEqual(['code_search', 'read_file']);
  });

  it('describes each tool by the line that declares it, not by a format line before the list', async () => {
    const { model } = playing(['Final Answer: ok']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    const formatFirst = ['Format: Action: read_file(path="value")', '- read_file(path="file/path") - Read the contents of a specific file'].join('\n');
    await service.step({ ...query, available_tools_prompt_segment: formatFirst });
    const started = (await readJsonlLog(path.join(runsDir, 'sess-x-q1.jsonl'))).events[0];
    expect(started?.type === 'run.started' && started.data.tools.map((tool) => tool.description)).toEqual(['- read_file(path="file/path") - Read the contents of a specific file']);
  });

  it('shows the model both the observation\'s text and the tool\'s result, and one of them when they are the same', async () => {
    const { model, seen } = playing([
      'Action: code_search(query="authentication")',
      'Action: read_file(path="auth.js")',
      'Final Answer: Authentication is in auth.js, with a login() function.',
    ]);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    const step1 = await service.step(query);
    const step2 = await service.step({
      ...query,
      user_query: '',
      conversation_history: [
        ...step1.updated_conversation_history,
        { role: 'tool_observation', content: 'Found: auth.js with login() function', toolResult: { success: true, result: 'Search results: auth.js:12' } },
      ],
    });
    expect(step2.status).toBe('action_proposed');
    const observed = seen[1]?.messages.at(-1)?.content ?? '';
    expect(observed).toContain('Found: auth.js with login() function');
    expect(observed).toContain('Search results: auth.js:12');
    const step3 = await service.step({
      ...query,
      user_query: '',
      conversation_history: [...step2.updated_conversation_history, { role: 'tool_observation', content: 'export function login() {}', toolResult: { success: true, result: 'export function login() {}' } }],
    });
    expect(step3.status).toBe('direct_response_provided');
    const second = seen[2]?.messages.at(-1)?.content ?? '';
    expect(second.split('export function login() {}')).toHaveLength(2);
  });

  it('shows the model both in the observations of an earlier query, which the next query starts from', async () => {
    const { model, seen } = playing(['Final Answer: Yes.']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    await service.step({
      ...query,
      user_query: 'Is it tested?',
      conversation_history: [
        { role: 'user', content: 'How is authentication implemented?' },
        { role: 'assistant', content: '', toolCall: { name: 'code_search', parameters: { query: 'auth' } } },
        { role: 'tool_observation', content: 'Found: auth.js with login() function', toolResult: { success: true, result: { files: ['auth.js'] } } },
        { role: 'assistant', content: 'In auth.js.' },
      ],
    });
    const shown = seen[0]?.messages.map((message) => message.content).join('\n') ?? '';
    expect(shown).toContain('Found: auth.js with login() function');
    expect(shown).toContain('{"files":["auth.js"]}');
  });

  it('gives back an observation with both as its log recorded it (a secret redacted), and the next step with that history goes on', async () => {
    const secret = 'sk-process-secret-7e1c0d9b';
    registerSecret(secret);
    const { model, seen } = playing(['Action: code_search(query="config")', 'Action: read_file(path="config.js")', 'Final Answer: Done.']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    const step1 = await service.step(query);
    const step2 = await service.step({
      ...query,
      user_query: '',
      conversation_history: [...step1.updated_conversation_history, { role: 'tool_observation', content: 'Found: config.js', toolResult: { success: true, result: `config.js: key = "${secret}"` } }],
    });
    expect(step2.status).toBe('action_proposed');
    const given = step2.updated_conversation_history.find((turn) => turn.role === 'tool_observation');
    expect(JSON.stringify(given)).not.toContain(secret);
    expect(given?.content).toBe(`Found: config.js\n\nconfig.js: key = "${REDACTED}"`);
    const step3 = await service.step({ ...query, user_query: '', conversation_history: [...step2.updated_conversation_history, { role: 'tool_observation', content: 'module.exports = {}' }] });
    expect(step3).toMatchObject({ status: 'direct_response_provided', direct_response: 'Done.' });
    expect(seen).toHaveLength(3);
  });
});
