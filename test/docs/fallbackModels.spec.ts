import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowNode } from '../../src/contracts/schema-types.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { buildModel } from '../../src/runtime/buildModel.js';
import { planRun } from '../../src/runtime/runPlan.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { runWithModel } from '../support/harness.js';
import { validFlow } from '../flows/flowFixtures.js';
import { codeBlocks, section } from './docPages.js';

// docs/flows.md's "Fallback models": its model node is valid in a flow and, built as a flow
// builds it, falls back from a Chat Completions server that is down to a Messages server.

const blocks = codeBlocks(section('docs/flows.md', '#### Fallback models')).filter((block) => block.lang === 'json');

let openAi: FakeChatServer;
let anthropic: FakeAnthropicServer;
beforeAll(async () => {
  [openAi, anthropic] = await Promise.all([startFakeChatCompletionsServer(), startFakeAnthropicServer()]);
});
afterAll(() => Promise.all([openAi.stop(), anthropic.stop()]));

describe('the fallback models section of docs/flows.md', () => {
  it('should show one model node', () => {
    expect(blocks).toHaveLength(1);
  });

  it('should show a model node that validates in a flow and answers through its first fallback when its model is down', async () => {
    const node = JSON.parse(blocks[0]?.code ?? '{}') as FlowNode;
    const flow = validFlow();
    flow.nodes = flow.nodes.map((candidate) => (candidate.id === 'llm' ? node : candidate));
    const validation = validateFlow(flow);
    if (!validation.ok) throw new Error(JSON.stringify(validation.errors));

    // The local servers stand in for OpenAI's and Anthropic's APIs.
    const env = { OPENAI_BASE_URL: openAi.baseUrl, ANTHROPIC_BASE_URL: anthropic.baseUrl, OPENAI_API_KEY: 'sk-doc-openai', ANTHROPIC_API_KEY: 'sk-doc-anthropic' };
    const model = await buildModel(planRun(validation.flow, '.'), { env });
    openAi.setFallback({ kind: 'error', status: 503, message: 'overloaded' });
    anthropic.enqueue({ kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision: { action: 'final', message: 'Nothing to look up.', confidence: 0.9 } } }] });
    const { result, events } = await runWithModel(model);

    expect(result.outcome).toMatchObject({ status: 'done', answer: 'Nothing to look up.' });
    // maxRetries 2: three attempts on the node's model, then Anthropic's once.
    expect(openAi.requests).toHaveLength(3);
    expect(anthropic.requests[0]?.body).toMatchObject({ model: 'claude-haiku-4-5' });
    const answered = events.find((event) => event.type === 'model.answered');
    expect(answered?.data).toMatchObject({ answeredBy: { provider: 'anthropic', model: 'claude-haiku-4-5' }, fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini', code: 'MODEL_SERVER_ERROR' }] });
  });
});
