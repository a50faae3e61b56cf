// The flow of the tests of runs that wait for an answer from outside: a scripted model, a tool the
// client runs (`ask_user`, a tool.client node) and a tool.module `echo` that needs approval and
// notes each call it makes in `effects.log` beside the flow (so a test can count its effects).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The `echo` tool's module (`tools/echo.mjs` beside the flow): echoes its text, and appends its call's key to `effects.log`. */
export const ECHO_TOOL = `import { appendFileSync } from 'node:fs';
export default {
  name: 'echo',
  description: 'Echoes its text',
  inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  execute({ text }, { idempotencyKey }) {
    appendFileSync(new URL('../effects.log', import.meta.url), idempotencyKey + '\\n');
    return { echoed: text };
  },
};
`;

/** A flow whose scripted model gives `answers`; `echo` needs approval unless `agent` says otherwise. */
export function waitingFlow(answers: readonly unknown[], agent: Record<string, unknown> = {}, id = 'waits') {
  return {
    id,
    nodes: [
      { id: 'agent', type: 'agent.core', position: { x: 0, y: 0 }, config: { strategy: 'react', maxIterations: 5, requiresApproval: ['echo'], ...agent } },
      { id: 'llm', type: 'model.llm', position: { x: 0, y: -150 }, config: { provider: 'scripted', answers } },
      {
        id: 'ask_user',
        type: 'tool.client',
        position: { x: -150, y: 150 },
        config: { description: 'Asks the person using the app', inputSchema: { type: 'object', properties: { question: { type: 'string' } } } },
      },
      { id: 'echo', type: 'tool.module', position: { x: 150, y: 150 }, config: { module: 'tools/echo.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'agent', target: 'llm' },
      { id: 'e2', source: 'agent', target: 'ask_user' },
      { id: 'e3', source: 'agent', target: 'echo' },
    ],
  };
}

/** Shorthand scripted answers. */
export const waitAnswer = {
  ask: (question = 'which text?') => ({ action: 'tool', tool: 'ask_user', input: { question }, confidence: 0.5 }),
  echo: (text: string) => ({ action: 'tool', tool: 'echo', input: { text }, confidence: 0.6 }),
  final: (message: string) => ({ action: 'final', message, confidence: 0.9 }),
};

/** Writes `flow` as `<dir>/<file>` with the echo tool beside it; returns the flow file's path. */
export async function writeWaitingFlow(dir: string, flow: unknown, file = 'flow.json'): Promise<string> {
  await mkdir(path.join(dir, 'tools'), { recursive: true });
  await writeFile(path.join(dir, 'tools', 'echo.mjs'), ECHO_TOOL);
  const flowPath = path.join(dir, file);
  await writeFile(flowPath, JSON.stringify(flow, null, 2));
  return flowPath;
}

/** The keys of the echo calls made in `dir` (its effects.log), in order. */
export async function echoEffects(dir: string): Promise<string[]> {
  const text = await readFile(path.join(dir, 'effects.log'), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}
