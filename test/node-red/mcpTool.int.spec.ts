import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEnvelope } from '../../src/contracts/schema-types.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { EVERYTHING_STDIO, FAULTY } from '../support/mcpFlows.js';
import { errorsOf, eventually, helper, loadFlow, nextMessage, statuses, withUserDir } from './nodeRedHarness.js';

/**
 * The `redflow-tool-mcp` node in a real Node-RED: an agent wired to it calls the tools of a real
 * MCP server (server-everything from npm, and the SDK-built fixture server that reports its
 * process id), each call through the node, over one connection kept while the flow is deployed.
 */

const call = (tool: string, input: unknown) => ({ action: 'tool', tool, input, confidence: 0.5 });
const final = (message: string) => ({ action: 'final', message, confidence: 0.9 });

const flow = (mcp: Record<string, unknown>, answers: unknown[]): NodeRedNodeConfig[] => [
  // The node's name stands for its server's tools in allowedTools.
  { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 4, allowedTools: ['server'], wires: [['answer'], ['model'], ['mcp'], []] },
  { id: 'model', type: 'redflow-model', provider: 'scripted', answers, wires: [] },
  { id: 'mcp', type: 'redflow-tool-mcp', name: 'server', ...mcp, wires: [] },
  { id: 'answer', type: 'helper' },
];

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the mcp tool node', () => {
  let userDir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  it('lets the agent call an MCP server\'s tools through the node, allowed by the node\'s name', async () => {
    await loadFlow(
      userDir,
      flow({ command: EVERYTHING_STDIO.command, args: EVERYTHING_STDIO.args, include: ['echo', 'get-sum'], prefix: 'ev_' }, [
        call('ev_echo', { message: 'from Node-RED' }),
        call('ev_get-sum', { a: 2, b: 3 }),
        final('echoed and summed'),
      ]),
    );
    const shown = statuses('mcp');
    const answered = nextMessage('answer', 30_000);
    helper.getNode('agent')?.receive({ payload: 'go' });
    const msg = await answered;
    const { envelope } = msg.redflow as { envelope: AgentEnvelope };
    expect(msg.payload).toBe('echoed and summed');
    expect(envelope.tools.available).toEqual(['ev_echo', 'ev_get-sum']);
    expect(envelope.tools.history.map((entry) => [entry.tool, entry.status, entry.output])).toEqual([
      ['ev_echo', 'succeeded', 'Echo: from Node-RED'],
      ['ev_get-sum', 'succeeded', expect.stringContaining('5')],
    ]);
    // The node shows each call it answered.
    await shown.until((text) => /^\d+ ms$/.test(text));
  });

  it('keeps one server process for every run while the flow is deployed, and stops it when the flow is stopped', async () => {
    const countFile = path.join(userDir, 'count.txt');
    await loadFlow(userDir, flow({ ...FAULTY, include: ['count'], env: { COUNT_FILE: countFile } }, [call('count', {}), final('counted')]));
    for (const input of ['first', 'second']) {
      const answered = nextMessage('answer', 30_000);
      helper.getNode('agent')?.receive({ payload: input });
      expect((await answered).payload).toBe('counted');
    }
    const pids = new Set((await readFile(countFile, 'utf8')).trim().split('\n').map((line) => Number(line.split(' ')[0])));
    expect(pids.size).toBe(1);
    const [pid] = [...pids];
    expect(processAlive(pid ?? 0)).toBe(true);
    await helper.unload();
    await eventually(() => !processAlive(pid ?? 0), 5000, 'the MCP server to stop');
  });

  it('reports a server that cannot start with MCP_SERVER_UNAVAILABLE naming the node', async () => {
    await loadFlow(userDir, flow({ command: process.execPath, args: [path.join(userDir, 'no-such-server.mjs')], connectTimeoutMs: '5000' }, [final('never')]));
    const errors = errorsOf('agent');
    helper.getNode('agent')?.receive({ payload: 'go' });
    await expect.poll(() => errors.join('\n'), { timeout: 10_000 }).toContain("MCP_SERVER_UNAVAILABLE: MCP server 'server'");
  });
});
