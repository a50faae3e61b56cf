import { describe, expect, it } from 'vitest';
import { validators } from '../../src/contracts/schemas.js';
import { ApiError, ErrorCode } from '../../src/errors.js';
import { errorAnswer } from '../../src/server/apiErrors.js';
import { parseReactStepRequest } from '../../src/stepService/parseReactStepRequest.js';

/** The request of the endpoint's own documentation, as a client sends it. */
export const documentedRequest = {
  project_id: 'uuid',
  session_id: '5f0c1b2e-7d4a-4c1e-9a3b-2f6d8e9c0a1b',
  user_query: 'How do I implement authentication?',
  conversation_history: [],
  explicit_context_paths: ['src/auth.js'],
  pinned_item_ids_to_include: ['pinned-id-1'],
  implicit_context: { last_focused_file_path: 'src/components/Login.tsx' },
  vector_search_results_to_include: [],
  available_tools_prompt_segment: 'You have access to: code_search(query), read_file(path)',
  llm_config: { modelName: 'gpt-4', tokenLimit: 8192, reservedOutputTokens: 1000, temperature: 0.2 },
  user_api_keys: { llmKey: 'sk-user-llm-api-key-0123' },
  max_iterations_left: 3,
};

describe('parseReactStepRequest', () => {
  it('takes the documented request as it is', () => {
    expect(parseReactStepRequest(documentedRequest)).toBe(documentedRequest);
  });

  it('takes a step that brings a tool observation', () => {
    const step = {
      ...documentedRequest,
      user_query: '',
      conversation_history: [
        { role: 'user', content: 'How is authentication implemented?', timestamp: '2024-01-01T00:00:00.000Z' },
        { role: 'assistant', content: 'I need to search.', toolCall: { name: 'code_search', parameters: { query: 'auth' } } },
        { role: 'tool_observation', content: 'Found: auth.js', toolResult: { success: true, result: 'Search results...' } },
      ],
    };
    expect(parseReactStepRequest(step)).toBe(step);
  });

  it('answers 400 listing every wrong field, each with its path', () => {
    const body = {
      ...documentedRequest,
      session_id: 'has spaces',
      conversation_history: [{ role: 'robot', content: 'x' }],
      llm_config: { tokenLimit: 'big', temperature: 3 },
      // An agent's maxIterations is at most 20: more was a 500 once its run's first event was refused.
      max_iterations_left: 21,
      surprise: true,
    };
    let thrown: unknown;
    try {
      parseReactStepRequest(body);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const answer = errorAnswer(thrown);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe(ErrorCode.HTTP_BODY_INVALID);
    expect(answer.body.fields).toEqual(
      expect.arrayContaining([
        { path: '/surprise', message: 'is not a field of this request' },
        { path: '/session_id', message: 'must match pattern "^[A-Za-z0-9_-]{1,100}$"' },
        { path: '/conversation_history/0/role', message: expect.stringContaining('must be one of') },
        { path: '/llm_config/modelName', message: 'is required' },
        { path: '/llm_config/tokenLimit', message: 'must be integer' },
        { path: '/llm_config/temperature', message: 'must be <= 2' },
        { path: '/max_iterations_left', message: 'must be <= 20' },
      ]),
    );
    expect(answer.body.fields).toHaveLength(7);
  });

  it('describes its answers with a schema the documented answer matches', () => {
    const documentedResponse = {
      session_id: 'uuid',
      thought: 'I need to search for authentication code to understand the implementation.',
      action_details: { tool_name: 'code_search', tool_args: { query: 'authentication login' }, raw_action_string: 'Action: code_search(query="authentication login")' },
      direct_response: null,
      updated_conversation_history: [
        { role: 'user', content: 'How do I implement authentication?', timestamp: '2024-01-01T00:00:00.000Z' },
        { role: 'assistant', content: 'I need to search.', toolCall: { name: 'code_search', parameters: { query: 'authentication login' } }, timestamp: '2024-01-01T00:00:01.000Z' },
      ],
      iterations_remaining: 2,
      status: 'action_proposed',
    };
    expect(validators.reactStepResponse(documentedResponse), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(validators.reactStepResponse({ ...documentedResponse, status: 'done' })).toBe(false);
  });
});
