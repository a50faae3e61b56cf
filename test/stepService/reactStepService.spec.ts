import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { validators } from '../../src/contracts/schemas.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { ErrorCode } from '../../src/errors.js';
import { ApiError } from '../../src/server/apiErrors.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import type { ReactStepRequest } from '../../src/stepService/reactStepTypes.js';

/** A model that plays back answers and keeps what it was sent and with which key. */
function recordingModel(answers: string[]) {
  const calls: { request: ModelRequest; apiKey: string | undefined }[] = [];
  const model = (apiKey: string | undefined): Promise<ModelActor> => Promise.resolve({
    kind: 'recording',
    complete: async (request: ModelRequest) => {
      calls.push({ request, apiKey });
      const text = answers.shift();
      if (text === undefined) throw new Error('no answer left');
      return { text, attempts: 1 };
    },
  });
  return { model, calls };
}

let runsDir: string;
beforeEach(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-steps-'));
});
afterEach(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

const first = (extra: Partial<ReactStepRequest> = {}): ReactStepRequest => ({
  session_id: 'sess-1',
  user_query: 'How is authentication implemented?',
  conversation_history: [],
  available_tools_prompt_segment: 'You have access to: code_search(query), read_file(path)',
  llm_config: { modelName: 'gpt-4o', tokenLimit: 8192, reservedOutputTokens: 1000 },
  user_api_keys: { llmKey: 'sk-user-SECRET-123' },
  max_iterations_left: 3,
  ...extra,
});

describe('the step service', () => {
  it('runs the documented workflow: action proposed, the client observes, a direct response', async () => {
    const { model, calls } = recordingModel([
      'Thought: I need to search for authentication code.\nAction: code_search(query="authentication")',
      'Thought: Now I can explain.\nFinal Answer: Authentication is implemented in auth.js with login().',
    ]);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const step1 = await service.step(first());
    expect(validators.reactStepResponse(step1), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(step1).toMatchObject({
      session_id: 'sess-1',
      trace_id: 'sess-1-q1',
      status: 'action_proposed',
      thought: 'I need to search for authentication code.',
      action_details: { tool_name: 'code_search', tool_args: { query: 'authentication' }, raw_action_string: 'Action: code_search(query="authentication")' },
      direct_response: null,
      iterations_remaining: 2,
    });
    expect(step1.updated_conversation_history.map((turn) => turn.role)).toEqual(['user', 'assistant']);

    const step2 = await service.step(
      first({
        user_query: '',
        conversation_history: [...step1.updated_conversation_history, { role: 'tool_observation', content: 'Found: auth.js with login()', toolResult: { success: true, result: 'auth.js: export function login() {}' } }],
        max_iterations_left: 2,
      }),
    );
    expect(step2).toMatchObject({ status: 'direct_response_provided', direct_response: 'Authentication is implemented in auth.js with login().', action_details: null, iterations_remaining: 1 });
    // The model saw the observation the client sent.
    expect(calls[1]?.request.messages.at(-1)?.content).toContain('auth.js: export function login() {}');
    // The user's key went to the model with each call, and nowhere else.
    expect(calls.map((call) => call.apiKey)).toEqual(['sk-user-SECRET-123', 'sk-user-SECRET-123']);
    const log = await readFile(path.join(runsDir, 'sess-1-q1.jsonl'), 'utf8');
    expect(log).not.toContain('sk-user-SECRET-123');
    expect(log).not.toContain('I need to search for authentication code');
    expect((await readJsonlLog(path.join(runsDir, 'sess-1-q1.jsonl'))).events.map((event) => event.type)).toEqual([
      'run.started', 'model.requested', 'model.answered', 'tool.requested', 'run.resumed', 'tool.completed', 'model.requested', 'model.answered', 'run.completed',
    ]);
  });

  it('answers a retried step again without calling the model, and refuses a history that disagrees with the log', async () => {
    const { model, calls } = recordingModel(['Action: code_search(query="auth")']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const step1 = await service.step(first());
    const again = await service.step(first());
    expect(again).toMatchObject({ status: 'action_proposed', action_details: { tool_name: 'code_search', tool_args: { query: 'auth' } } });
    expect(calls).toHaveLength(1);
    const forged = step1.updated_conversation_history.map((turn) => (turn.toolCall ? { ...turn, toolCall: { name: 'read_file', parameters: { path: '/etc/passwd' } } } : turn));
    await expect(service.step(first({ user_query: '', conversation_history: [...forged, { role: 'tool_observation', content: 'x' }] }))).rejects.toMatchObject({
      code: ErrorCode.REACT_STEP_HISTORY_CONFLICT,
    });
  });

  it('rebuilds a session from the client’s history when it has no log for it, and goes on', async () => {
    const { model, calls } = recordingModel(['Final Answer: It is in auth.js.']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const answer = await service.step(
      first({
        user_query: '',
        conversation_history: [
          { role: 'user', content: 'How is authentication implemented?' },
          { role: 'assistant', content: 'searching', toolCall: { name: 'code_search', parameters: { query: 'auth' } } },
          { role: 'tool_observation', content: 'auth.js', toolResult: { success: true, result: 'auth.js' } },
        ],
      }),
    );
    expect(answer).toMatchObject({ status: 'direct_response_provided', direct_response: 'It is in auth.js.' });
    expect(calls[0]?.request.messages.at(-1)?.content).toContain('auth.js');
    expect(await readdir(runsDir)).toContain('sess-1-q1.jsonl');
  });

  it('refuses a second step of a session while the first is under way', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = (): Promise<ModelActor> =>
      Promise.resolve({
        kind: 'slow',
        complete: async () => {
          await held;
          return { text: 'Final Answer: done', attempts: 1 };
        },
      });
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', slow]]) });
    const firstStep = service.step(first());
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(service.step(first())).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_CONFLICT, message: expect.stringContaining('under way') });
    release();
    expect(await firstStep).toMatchObject({ status: 'direct_response_provided', direct_response: 'done' });
  });

  it('falls back to a direct response when the action cannot be read, and names an unknown model', async () => {
    const { model } = recordingModel(['Thought: hmm\nAction: code_search(query=auth)']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    expect(await service.step(first())).toMatchObject({ status: 'direct_response_provided', direct_response: 'Action: code_search(query=auth)' });
    await expect(service.step(first({ session_id: 'sess-2', llm_config: { modelName: 'nope' } }))).rejects.toBeInstanceOf(ApiError);
    await expect(service.step(first({ session_id: 'sess-2', llm_config: { modelName: 'nope' } }))).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_MODEL_UNKNOWN });
  });
});
