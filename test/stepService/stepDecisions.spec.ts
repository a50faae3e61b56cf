// The step service and the model's decisions besides a tool call or a final answer: a step client
// cannot hold a run for a person's answer, so a question ends the query's run at once (escalate)
// and the step answers with it; a delegation is an error naming the agent and the task.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor } from '../../src/actors/model.js';
import { validators } from '../../src/contracts/schemas.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { ErrorCode } from '../../src/errors.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import type { ReactStepRequest } from '../../src/stepService/reactStepTypes.js';

const playing = (text: string) => (): Promise<ModelActor> => Promise.resolve({ kind: 'playing', complete: () => Promise.resolve({ text, attempts: 1 }) });

let runsDir: string;
beforeEach(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-step-decisions-'));
});
afterEach(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

const step: ReactStepRequest = {
  session_id: 'sess-d',
  user_query: 'Refund my order',
  conversation_history: [],
  available_tools_prompt_segment: 'You have access to: lookup(order)',
  llm_config: { modelName: 'm' },
};

describe('the step service and the model asking or delegating', () => {
  it('should answer a question for the user as the direct response, its run ended escalate', async () => {
    const model = playing(JSON.stringify({ action: 'request_info', input: { question: 'Which order number?' } }));
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    const answer = await service.step(step);
    expect(validators.reactStepResponse(answer), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(answer).toMatchObject({ status: 'direct_response_provided', direct_response: 'Which order number?', action_details: null });
    expect(answer.updated_conversation_history.at(-1)).toMatchObject({ role: 'assistant', content: 'Which order number?' });
    const { events } = await readJsonlLog(path.join(runsDir, 'sess-d-q1.jsonl'));
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { status: 'escalate', reason: 'info_requested' } } });
  });

  it('should answer a delegation with an error naming the agent and the task', async () => {
    const model = playing(JSON.stringify({ action: 'delegate', input: { agent_id: 'billing', task: 'refund the order' } }));
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['m', model]]) });
    const answer = await service.step(step);
    expect(validators.reactStepResponse(answer)).toBe(true);
    expect(answer).toMatchObject({ status: 'error', error: { code: ErrorCode.RUN_DELEGATED, message: 'the model handed the task to agent billing: refund the order' } });
  });
});
