import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/contracts/schema-types.js';
import { ErrorCode } from '../../src/errors.js';
import type { ConversationTurn, ReactStepRequest } from '../../src/stepService/reactStepTypes.js';
import { matchHistory, sessionPosition, sessionTraceId, type SessionPosition } from '../../src/stepService/sessionTurns.js';

const step = (user_query: string, conversation_history: ConversationTurn[]): ReactStepRequest => ({
  session_id: 's1',
  user_query,
  conversation_history,
  llm_config: { modelName: 'gpt-4o' },
});
const user = (content: string): ConversationTurn => ({ role: 'user', content });
const proposes = (name: string, parameters: Record<string, unknown>): ConversationTurn => ({ role: 'assistant', content: 'thinking', toolCall: { name, parameters } });
const observes = (result: unknown, success = true): ConversationTurn => ({ role: 'tool_observation', content: String(result), toolResult: { success, result } });
const answers = (content: string): ConversationTurn => ({ role: 'assistant', content });

describe('sessionPosition', () => {
  it('starts the session’s next query when the step has a user_query', () => {
    const earlier = [user('hi'), answers('hello')];
    expect(sessionPosition(step('How is auth done?', earlier))).toEqual({ queryNumber: 2, query: 'How is auth done?', earlierTurns: earlier, calls: [], newQuery: true });
    expect(sessionTraceId('s1', 2)).toBe('s1-q2');
  });

  it('continues the last query with the calls and observations since', () => {
    const position = sessionPosition(step('', [user('hi'), answers('hello'), user('auth?'), proposes('code_search', { query: 'auth' }), observes('Found: auth.js')])) as SessionPosition;
    expect(position).toMatchObject({ queryNumber: 2, query: 'auth?', newQuery: false });
    expect(position.earlierTurns).toHaveLength(2);
    expect(position.calls).toEqual([{ tool: 'code_search', input: { query: 'auth' }, observation: { ok: true, output: 'Found: auth.js', content: 'Found: auth.js' } }]);
  });

  it('says which turn is wrong in a history it cannot read', () => {
    expect(sessionPosition(step('', []))).toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID, path: '/user_query' });
    expect(sessionPosition(step('', [user('q'), observes('x')]))).toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID, path: '/conversation_history/1' });
    expect(sessionPosition(step('', [user('q'), proposes('a', {}), proposes('b', {})]))).toMatchObject({ path: '/conversation_history/2' });
    expect(sessionPosition(step('', [user('q'), answers('done')]))).toMatchObject({ message: expect.stringContaining('already answered') });
  });
});

describe('matchHistory', () => {
  const call = (status: ToolCall['status'], output?: unknown): ToolCall => ({
    iteration: 1,
    tool: 'code_search',
    input: { query: 'auth', limit: 5 },
    idempotencyKey: 's1-q1:1',
    status,
    ...(output !== undefined && { output }),
  });

  it('hands over the observation of the call the run waits for', () => {
    const calls = [{ tool: 'code_search', input: { limit: 5, query: 'auth' }, observation: { ok: true, output: 'r', content: 'r' } }];
    expect(matchHistory(calls, [call('requested')])).toEqual({ kind: 'answers', observation: calls[0]?.observation, iteration: 1, idempotencyKey: 's1-q1:1' });
  });

  it('takes a retried step (the client is behind the log) as nothing new', () => {
    expect(matchHistory([], [call('succeeded', 'r')])).toEqual({ kind: 'same' });
    expect(matchHistory([{ tool: 'code_search', input: { query: 'auth', limit: 5 }, observation: { ok: true, output: 'r', content: 'r' } }], [call('succeeded', 'r'), { ...call('requested'), iteration: 2 }])).toEqual({ kind: 'same' });
  });

  it('finds a conflict: another tool, other arguments, another result, a call the run never made', () => {
    const codes = [
      matchHistory([{ tool: 'read_file', input: {} }], [call('requested')]),
      matchHistory([{ tool: 'code_search', input: { query: 'other', limit: 5 } }], [call('requested')]),
      matchHistory([{ tool: 'code_search', input: { query: 'auth', limit: 5 }, observation: { ok: true, output: 'else', content: 'else' } }], [call('succeeded', 'r')]),
      matchHistory([{ tool: 'code_search', input: {} }], []),
    ];
    for (const match of codes) expect(match).toMatchObject({ kind: 'conflict', error: { code: ErrorCode.REACT_STEP_HISTORY_CONFLICT } });
  });
});
