// The flow the editor's browser tests run: an agent, a scripted model, and one tool.module tool
// (`tools/echo.mjs` beside the flow), laid out by hand so nothing moves under the test.

/** The `echo` tool's module: echoes its text, and throws on "fail" (a failed call on demand). */
export const ECHO_TOOL = `// Echoes its text; throws on "fail".
export default {
  name: 'echo',
  description: 'Echoes its text',
  inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, additionalProperties: false },
  async execute({ text }) {
    if (text === 'fail') throw new Error('asked to fail');
    return { echoed: text };
  },
};
`;

/** A flow whose model gives `answers` in turn and may call `echo`; write ECHO_TOOL to `tools/echo.mjs` beside it. */
export function echoFlow(answers: readonly unknown[], name?: string) {
  return {
    ...(name !== undefined && { name }),
    nodes: [
      { id: 'agent', type: 'agent.core', position: { x: 0, y: 0 }, config: { strategy: 'react', maxIterations: 5 } },
      { id: 'llm', type: 'model.llm', position: { x: 0, y: -150 }, config: { provider: 'scripted', answers } },
      { id: 'echo', type: 'tool.module', position: { x: 0, y: 150 }, config: { module: 'tools/echo.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'agent', target: 'llm' },
      { id: 'e2', source: 'agent', target: 'echo' },
    ],
  };
}
