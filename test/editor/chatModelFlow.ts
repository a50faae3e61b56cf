// A flow for the editor's browser tests whose model is a local Chat Completions server
// (test/support/fakeChatCompletionsServer.ts, streamed as the real protocol is), with one tool the
// client runs (`lookup`): laid out by hand so nothing moves under the test.

/** The client tool's name. */
export const CLIENT_TOOL = 'lookup';

/** A flow asking the Chat Completions server at `baseUrl` (…/v1), which may call the client tool `lookup`. */
export function chatModelFlow(baseUrl: string, name: string) {
  return {
    name,
    nodes: [
      { id: 'question', type: 'trigger.input', position: { x: -320, y: 0 } },
      { id: 'agent', type: 'agent.core', position: { x: 0, y: 0 }, config: { strategy: 'react', maxIterations: 5 } },
      { id: 'model', type: 'model.llm', position: { x: 0, y: -170 }, config: { provider: 'openai-compatible', model: 'test-model', baseUrl, maxRetries: 0 } },
      {
        id: CLIENT_TOOL,
        type: 'tool.client',
        position: { x: 0, y: 170 },
        config: {
          description: 'Looks an order up on the client',
          inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } }, additionalProperties: false },
        },
      },
      { id: 'reply', type: 'response.chat', position: { x: 320, y: 0 } },
    ],
    edges: [
      { id: 'e1', source: 'question', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: CLIENT_TOOL },
      { id: 'e4', source: 'agent', target: 'reply' },
    ],
  };
}
