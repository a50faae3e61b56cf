import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openMcpConnection } from '../../src/actors/tools/mcpConnection.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { mcpTools } from '../../src/agents/agentTool.js';
import { EVERYTHING_STDIO, FAULTY, final, tool } from '../support/mcpFlows.js';

/** MCP servers' tools in code: an agent definition's tools from `mcpTools`, and the tool list kept up to date. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-code-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mcpTools', () => {
  it("gives an agent definition a server's tools, called through a logged run", async () => {
    const everything = await mcpTools({ name: 'everything', ...EVERYTHING_STDIO, include: ['get-sum'] });
    try {
      expect(everything.tools.map((t) => t.name)).toEqual(['get-sum']);
      const result = await new AgentExecutor({ runsDir: dir }).execute({
        name: 'adder',
        description: 'Adds numbers',
        promptConfig: { systemPrompt: 'You add numbers with your tool.', query: 'What is 20 + 22?' },
        modelConfig: { provider: 'scripted', answers: [tool('get-sum', { a: 20, b: 22 }), final('42')] },
        toolConfig: { tools: [...everything.tools] },
      });
      expect(result).toMatchObject({ success: true, output: '42' });
      const observation = result.messages.map((message) => message.content).join('\n');
      expect(observation).toContain('The sum of 20 and 22 is 42');
    } finally {
      await everything.close();
    }
  });
});

describe('the tool list of a connection', () => {
  it('is listed once, and listed again when the server says it changed (notifications/tools/list_changed)', async () => {
    const connection = openMcpConnection({ name: 'faulty', config: FAULTY, baseDir: dir, maxMessageBytes: 1 << 20 });
    try {
      const first = await connection.tools();
      expect(first.map((t) => t.name)).not.toContain('fresh');
      expect(await connection.tools()).toBe(first);
      // The server adds a tool while it runs and tells its client.
      await connection.call('grow', {}, { signal: new AbortController().signal, timeoutMs: 5_000, idempotencyKey: 't:1' });
      await vi.waitFor(async () => expect((await connection.tools()).map((t) => t.name)).toContain('fresh'), { timeout: 5_000 });
    } finally {
      await connection.close();
    }
  });
});
