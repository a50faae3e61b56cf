import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { checkSubjectTokens } from '../../src/nats/cluster/flowSubjects.js';
import { validateFlow, type ResolvedFlow } from '../../src/flows/validateFlow.js';

function flowWithModelId(modelId: string): ResolvedFlow {
  const validation = validateFlow({
    nodes: [
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 2, allowedTools: ['t'] } },
      { id: modelId, type: 'model.llm', config: { provider: 'scripted', answers: [] } },
      { id: 't', type: 'tool.http', config: { url: 'http://127.0.0.1:1/x', inputSchema: { type: 'object' } } },
    ],
    edges: [
      { id: 'e1', source: 'agent', target: modelId },
      { id: 'e2', source: 'agent', target: 't' },
    ],
  });
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  return validation.flow;
}

describe('flows on NATS', () => {
  it('should refuse a model node id that cannot be a subject token, saying how to fix it', () => {
    expect(() => checkSubjectTokens(flowWithModelId('llm.1'))).toThrow(expect.objectContaining({ code: ErrorCode.NODE_CONFIG_INVALID }));
    expect(() => checkSubjectTokens(flowWithModelId('my model'))).toThrow(/rename|NATS subject/);
    expect(() => checkSubjectTokens(flowWithModelId('llm_1'))).not.toThrow();
  });
});
