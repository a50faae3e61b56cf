import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor } from '../../src/actors/model.js';
import { ErrorCode } from '../../src/errors.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import type { ConversationTurn, ReactStepRequest } from '../../src/stepService/reactStepTypes.js';

// Steps the service refuses (400) are refused before their session's log exists: no file, empty
// or not, is left for them, whatever the history holds.

const answering = (text: string) => (): Promise<ModelActor> => Promise.resolve({ kind: 'scripted', complete: () => Promise.resolve({ text, attempts: 1 }) });

let runsDir: string;
beforeEach(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-step-refusals-'));
});
afterEach(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 'x' };
  for (let i = 0; i < levels; i += 1) value = { inner: value };
  return value;
}

const segment = 'You have access to: code_search(query), read_file(path)';

function continuing(turns: ConversationTurn[], extra: Partial<ReactStepRequest> = {}): ReactStepRequest {
  return {
    session_id: 'sess-r',
    user_query: '',
    conversation_history: [{ role: 'user', content: 'How is authentication implemented?' }, ...turns],
    available_tools_prompt_segment: segment,
    llm_config: { modelName: 'm' },
    max_iterations_left: 3,
    ...extra,
  };
}

describe('a step the service refuses', () => {
  it('refuses tool call parameters nested 3,000 deep with 400 REACT_STEP_HISTORY_INVALID at the turn, writing nothing', async () => {
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', answering('Final Answer: done')]]) });
    const request = continuing([
      { role: 'assistant', content: '', toolCall: { name: 'code_search', parameters: nested(3_000) } },
      { role: 'tool_observation', content: 'Found: auth.js' },
    ]);
    await expect(service.step(request)).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID, path: '/conversation_history/1/toolCall/parameters' });
    expect(await readdir(runsDir)).toEqual([]);
  });

  it('measures parameters as a model answer\'s: 64 levels are taken, 65 refused', async () => {
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', answering('Final Answer: done')]]) });
    const withDepth = (levels: number, session: string) =>
      continuing([{ role: 'assistant', content: '', toolCall: { name: 'code_search', parameters: nested(levels) } }, { role: 'tool_observation', content: 'Found: auth.js' }], { session_id: session });
    // nested(n) is n + 1 objects deep.
    await expect(service.step(withDepth(64, 'deep-65'))).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID });
    await expect(service.step(withDepth(63, 'deep-64'))).resolves.toMatchObject({ status: 'direct_response_provided' });
  });

  it('records an observation nested 3,000 deep as the call\'s failure, as any tool\'s reply', async () => {
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', answering('Final Answer: done')]]) });
    const answer = await service.step(
      continuing([
        { role: 'assistant', content: '', toolCall: { name: 'code_search', parameters: { query: 'auth' } } },
        { role: 'tool_observation', content: 'Found: auth.js', toolResult: { success: true, result: nested(3_000) } },
      ]),
    );
    expect(answer.status).toBe('direct_response_provided');
    expect(answer.updated_conversation_history.at(-2)?.toolResult).toMatchObject({ success: false });
  });

  it('leaves no log file for a history its run could not have had (a tool the list does not name)', async () => {
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', answering('Final Answer: done')]]) });
    const request = continuing([
      { role: 'assistant', content: '', toolCall: { name: 'delete_everything', parameters: {} } },
      { role: 'tool_observation', content: 'done' },
    ]);
    await expect(service.step(request)).rejects.toMatchObject({ code: ErrorCode.REACT_STEP_HISTORY_INVALID });
    expect(await readdir(runsDir)).toEqual([]);
  });

  it('leaves no log file for a query over the token budget', async () => {
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', answering('Final Answer: done')]]) });
    const request = { ...continuing([]), conversation_history: [], user_query: 'why '.repeat(2_000), llm_config: { modelName: 'm', tokenLimit: 1_000, reservedOutputTokens: 100 } };
    await expect(service.step(request)).rejects.toMatchObject({ code: ErrorCode.CONTEXT_BUDGET_EXCEEDED });
    expect(await readdir(runsDir)).toEqual([]);
  });
});
