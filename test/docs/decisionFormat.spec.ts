import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowNode } from '../../src/contracts/schema-types.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { buildModel } from '../../src/runtime/buildModel.js';
import { planRun } from '../../src/runtime/runPlan.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { runWithModel } from '../support/harness.js';
import { validFlow } from '../flows/flowFixtures.js';
import { codeBlocks, section } from './docPages.js';

// docs/flows.md's "Decision format and native tool calling": its model node is valid in a flow
// and, built as a flow builds it, runs with native tools against a local server speaking Ollama's
// OpenAI-compatible wire protocol.

const blocks = codeBlocks(section('docs/flows.md', '#### Decision format and native tool calling')).filter((block) => block.lang === 'json');

let server: FakeChatServer;
beforeAll(async () => {
  server = await startFakeChatCompletionsServer();
});
afterAll(() => server.stop());

describe('the decision format section of docs/flows.md', () => {
  it('should show one model node', () => {
    expect(blocks).toHaveLength(1);
  });

  it('should show a model node that validates in a flow and runs with native tools', async () => {
    const node = JSON.parse(blocks[0]?.code ?? '{}') as FlowNode;
    const flow = validFlow();
    flow.nodes = flow.nodes.map((candidate) => (candidate.id === 'llm' ? node : candidate));
    const validation = validateFlow(flow);
    if (!validation.ok) throw new Error(JSON.stringify(validation.errors));

    // The page's node as a flow builds it, the server's address standing in for Ollama's default.
    const model = await buildModel(planRun(validation.flow, '.'), { env: { REDFLOW_MODEL_BASE_URL: server.baseUrl } });
    server.enqueue({ kind: 'completion', content: 'Nothing to look up.' });
    const { result } = await runWithModel(model);

    expect(result.outcome).toMatchObject({ status: 'done', answer: 'Nothing to look up.' });
    expect(server.requests[0]?.body).toMatchObject({ model: 'qwen2.5:7b', tool_choice: 'auto', parallel_tool_calls: false });
  });
});
