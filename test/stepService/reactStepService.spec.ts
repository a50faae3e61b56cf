import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { validators } from '../../src/contracts/schemas.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { ApiError, ErrorCode } from '../../src/errors.js';
import { createSteppingClock, systemClock } from '../../src/runtime/clock.js';
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
    // The model was asked for the thought the answer carries (the base prompt says not to explain).
    expect(calls[0]?.request.messages[0]?.content).toContain('begin every answer with one short sentence of reasoning for the user: a "thought" member');
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

  it('answers a step whose observation came past the wait\'s deadline with the run as it ended: blocked, wait_expired, the model not asked again', async () => {
    const { model, calls } = recordingModel(['Action: code_search(query="auth")', 'Final Answer: never asked']);
    let now = Date.parse('2026-01-01T00:00:00Z');
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]), clock: { ...systemClock, now: () => now } });
    const step1 = await service.step(first());
    now += 366 * 24 * 60 * 60 * 1000;
    const step2 = await service.step(
      first({ user_query: '', conversation_history: [...step1.updated_conversation_history, { role: 'tool_observation', content: 'too late', toolResult: { success: true, result: 'x' } }], max_iterations_left: 2 }),
    );
    expect(validators.reactStepResponse(step2), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(calls).toHaveLength(1);
    const { events } = await readJsonlLog(path.join(runsDir, 'sess-1-q1.jsonl'));
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { status: 'blocked', reason: 'wait_expired' } } });
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

  it('refuses a history whose query is not the one the session’s log was asked, instead of answering that other query', async () => {
    const { model, calls } = recordingModel(['Final Answer: Paris.']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    expect(await service.step(first({ user_query: 'What is the capital of France?' }))).toMatchObject({ direct_response: 'Paris.' });
    // The same session id, a new conversation: its first query is q1 again, and the log has another one.
    await expect(service.step(first({ user_query: 'What is the capital of Germany?' }))).rejects.toMatchObject({
      code: ErrorCode.REACT_STEP_HISTORY_CONFLICT,
      path: '/user_query',
    });
    // A step that continues a query the log never had.
    await expect(
      service.step(first({ user_query: '', conversation_history: [{ role: 'user', content: 'Something else' }] })),
    ).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_CONFLICT });
    // The retry of the real query still answers from the log.
    expect(await service.step(first({ user_query: 'What is the capital of France?' }))).toMatchObject({ direct_response: 'Paris.' });
    expect(calls).toHaveLength(1);
  });

  it('stamps the query’s turn with the time it was asked, before the model’s, in the answer and in its retry', async () => {
    const { model } = recordingModel(['Action: code_search(query="auth")']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]), clock: createSteppingClock(Date.parse('2026-01-01T00:00:00Z'), 1000) });
    for (const answer of [await service.step(first()), await service.step(first())]) {
      const [asked, proposed] = answer.updated_conversation_history;
      expect(asked?.role).toBe('user');
      expect(Date.parse(asked?.timestamp ?? '')).toBeLessThan(Date.parse(proposed?.timestamp ?? ''));
    }
  });

  it('gives back an observation as the run recorded it (over the reply limit: a failure), so the next step with that history goes on', async () => {
    const { model, calls } = recordingModel(['Action: code_search(query="a")', 'Action: code_search(query="b")', 'Final Answer: done']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const one = await service.step(first());
    const huge = { role: 'tool_observation', content: 'everything', toolResult: { success: true, result: 'y'.repeat(1_500_000) } } as const;
    const two = await service.step(first({ user_query: '', conversation_history: [...one.updated_conversation_history, huge] }));
    expect(two.status).toBe('action_proposed');
    expect(calls[1]?.request.messages.at(-1)?.content).toContain('TOOL_RESPONSE_TOO_LARGE');
    const given = two.updated_conversation_history.find((turn) => turn.role === 'tool_observation');
    expect(given).toMatchObject({ content: 'everything', toolResult: { success: false, error: expect.stringContaining('more than') } });
    const three = await service.step(first({ user_query: '', conversation_history: [...two.updated_conversation_history, { role: 'tool_observation', content: 'o2' }] }));
    expect(three).toMatchObject({ status: 'direct_response_provided', direct_response: 'done' });
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

  it('rebuilds an observation as its own log would hold it: over the reply limit, a failure', async () => {
    const { model, calls } = recordingModel(['Final Answer: done']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const search = (query: string) => ({ role: 'assistant', content: '', toolCall: { name: 'code_search', parameters: { query } } }) as const;
    const answer = await service.step(
      first({
        user_query: '',
        conversation_history: [
          { role: 'user', content: 'How is authentication implemented?' },
          search('a'),
          { role: 'tool_observation', content: 'everything', toolResult: { success: true, result: 'y'.repeat(1_500_000) } },
          search('b'),
          { role: 'tool_observation', content: 'o2' },
        ],
      }),
    );
    expect(answer.status).toBe('direct_response_provided');
    const log = (await readJsonlLog(path.join(runsDir, 'sess-1-q1.jsonl'))).events;
    expect(log.find((event) => event.type === 'tool.completed')).toMatchObject({ data: { ok: false, error: { code: ErrorCode.TOOL_RESPONSE_TOO_LARGE } } });
    expect(calls[0]?.request.messages.map((message) => message.content).join('\n')).not.toContain('y'.repeat(1000));
    expect(answer.updated_conversation_history[2]).toMatchObject({ toolResult: { success: false } });
  });

  it('catches a log up that other servers’ steps left behind the history, and goes on (servers without a shared log, in turn)', async () => {
    const { model, calls } = recordingModel(['Action: code_search(query="a")', 'Action: read_file(path="b")', 'Final Answer: found']);
    const serverA = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const serverB = createStepService({ logs: jsonlStepLogs(await mkdtemp(path.join(runsDir, 'b-'))), models: new Map([['gpt-4o', model]]) });
    const observe = (answer: { updated_conversation_history: readonly unknown[] }, content: string) =>
      [...answer.updated_conversation_history, { role: 'tool_observation', content }] as ReactStepRequest['conversation_history'];
    const one = await serverA.step(first());
    const two = await serverB.step(first({ user_query: '', conversation_history: observe(one, 'o1') }));
    expect(two).toMatchObject({ status: 'action_proposed', action_details: { tool_name: 'read_file' } });
    const three = await serverA.step(first({ user_query: '', conversation_history: observe(two, 'o2') }));
    expect(three).toMatchObject({ status: 'direct_response_provided', direct_response: 'found', iterations_remaining: 0 });
    expect(calls).toHaveLength(3);
    // The model saw both observations, and A's log holds the whole query, replayable on its own.
    expect(calls[2]?.request.messages.map((message) => message.content).join('\n')).toMatch(/o1[\s\S]*o2/);
    const { events } = await readJsonlLog(path.join(runsDir, 'sess-1-q1.jsonl'));
    expect(events.filter((event) => event.type === 'tool.completed')).toHaveLength(2);
    expect(events.at(-1)?.type).toBe('run.completed');
  });

  it('refuses to rebuild a history its run could not have had, writing nothing, and rebuilds the right one after', async () => {
    const { model, calls } = recordingModel(['Final Answer: It is in auth.js.']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const asked = { role: 'user', content: 'How is authentication implemented?' } as const;
    const observed = { role: 'tool_observation', content: 'auth.js', toolResult: { success: true, result: 'auth.js' } } as const;
    // A tool the step's tool list does not name.
    await expect(
      service.step(first({ user_query: '', conversation_history: [asked, { role: 'assistant', content: '', toolCall: { name: 'delete_all', parameters: {} } }, observed] })),
    ).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID, path: '/conversation_history', message: expect.stringContaining('delete_all') });
    // More calls than a run may make (20).
    const search = { role: 'assistant', content: '', toolCall: { name: 'code_search', parameters: { query: 'auth' } } } as const;
    await expect(
      service.step(first({ user_query: '', conversation_history: [asked, ...Array.from({ length: 21 }, () => [search, observed]).flat()] })),
    ).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID });
    expect(await readFile(path.join(runsDir, 'sess-1-q1.jsonl'), 'utf8').catch(() => '')).toBe('');
    expect(await service.step(first({ user_query: '', conversation_history: [asked, search, observed] }))).toMatchObject({ direct_response: 'It is in auth.js.' });
    expect(calls).toHaveLength(1);
  });

  it('counts max_iterations_left as the client sends it back (iterations_remaining), with a log and rebuilt from the history', async () => {
    const answers = ['Action: code_search(query="a")', 'Action: code_search(query="b")', 'Final Answer: found'];
    const { model } = recordingModel([...answers, ...answers]);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const observe = (answer: { updated_conversation_history: readonly unknown[] }, content: string) =>
      [...answer.updated_conversation_history, { role: 'tool_observation', content }] as ReactStepRequest['conversation_history'];
    const one = await service.step(first({ max_iterations_left: 3 }));
    expect(one).toMatchObject({ status: 'action_proposed', iterations_remaining: 2 });
    const two = await service.step(first({ user_query: '', conversation_history: observe(one, 'o1'), max_iterations_left: one.iterations_remaining }));
    expect(two).toMatchObject({ status: 'action_proposed', iterations_remaining: 1 });
    const three = await service.step(first({ user_query: '', conversation_history: observe(two, 'o2'), max_iterations_left: two.iterations_remaining }));
    expect(three).toMatchObject({ status: 'direct_response_provided', direct_response: 'found', iterations_remaining: 0 });

    // The same session on a server without its log: each step rebuilds it from the history.
    const elsewhere = async () => createStepService({ logs: jsonlStepLogs(await mkdtemp(path.join(runsDir, 'other-'))), models: new Map([['gpt-4o', model]]) });
    const a = await (await elsewhere()).step(first({ session_id: 'sess-2', max_iterations_left: 3 }));
    const b = await (await elsewhere()).step(first({ session_id: 'sess-2', user_query: '', conversation_history: observe(a, 'o1'), max_iterations_left: a.iterations_remaining }));
    expect(b).toMatchObject({ status: 'action_proposed', iterations_remaining: 1 });
    const c = await (await elsewhere()).step(first({ session_id: 'sess-2', user_query: '', conversation_history: observe(b, 'o2'), max_iterations_left: b.iterations_remaining }));
    expect(c).toMatchObject({ status: 'direct_response_provided', direct_response: 'found', iterations_remaining: 0 });
  });

  it('answers a query with no iteration left as an error, without asking the model', async () => {
    const { model, calls } = recordingModel(['Action: code_search(query="a")']);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const answer = await service.step(first({ max_iterations_left: 0 }));
    expect(validators.reactStepResponse(answer), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(answer).toMatchObject({ status: 'error', action_details: null, direct_response: null, iterations_remaining: 0, error: { code: ErrorCode.ITERATION_OVERFLOW } });
    expect(answer.updated_conversation_history.map((turn) => turn.role)).toEqual(['user']);
    expect(calls).toHaveLength(0);
    expect(await readdir(runsDir)).toEqual([]);
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
