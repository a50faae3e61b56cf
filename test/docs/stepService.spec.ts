import { describe, expect, it } from 'vitest';
import { parseReactStepRequest } from '../../src/stepService/parseReactStepRequest.js';
import { codeBlocks, readPage } from './docPages.js';

// docs/step-service.md's request bodies are requests the step service takes: the query of step 1
// (in its curl command) and the tool observation of step 2, which follows the call step 1 proposed.

const page = readPage('docs/step-service.md');

describe('the step service page (docs/step-service.md)', () => {
  it('should show a step 1 and a step 2 with a tool observation that the service reads as written', () => {
    const bodies = codeBlocks(page).flatMap((block) => {
      if (block.lang === 'json' && block.code.includes('"user_query"')) return [block.code];
      const curl = block.lang === 'sh' ? /react_step[\s\S]*?-d '([\s\S]*?)'/.exec(block.code)?.[1] : undefined;
      return curl === undefined ? [] : [curl];
    });
    expect(bodies).toHaveLength(2);
    const [query, observation] = bodies.map((body) => parseReactStepRequest(JSON.parse(body)));
    expect(query?.user_query).not.toBe('');
    expect(observation?.user_query).toBe('');
    const history = observation?.conversation_history ?? [];
    expect(history.at(-1)).toMatchObject({ role: 'tool_observation', toolResult: { success: true } });
    expect(history.at(-2)?.toolCall?.name).toBe('code_search');
    expect(history[0]).toMatchObject({ role: 'user', content: query?.user_query });
  });
});
