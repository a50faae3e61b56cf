import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { BIN, FLOWS, OFFERED, inspector } from './mcpHarness.js';

// The MCP Inspector's CLI as an independent client of `redflow mcp`: it spawns the server itself,
// as a desktop client does, and prints the answer as JSON.

let runsDir: string;
beforeAll(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-inspector-'));
});
afterAll(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

const server = () => [process.execPath, BIN, 'mcp', '--flows', FLOWS, '--runs', runsDir];

describe('redflow mcp, to the MCP Inspector CLI', () => {
  it('should list the flows as tools', async () => {
    const listed = (await inspector([...server(), '--method', 'tools/list'])) as { tools: { name: string; inputSchema: unknown }[] };
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(OFFERED);
    expect(listed.tools.find((tool) => tool.name === 'ask')?.inputSchema).toMatchObject({ required: ['input'] });
  });

  it('should call a flow and get its answer and its run', async () => {
    const result = (await inspector([...server(), '--method', 'tools/call', '--tool-name', 'ask', '--tool-arg', 'input=France'])) as {
      content: { text: string }[];
      isError: boolean;
      _meta: Record<string, string>;
    };
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'The capital of France is Paris.' }] });
    const { events } = await readJsonlLog(path.join(runsDir, `${result._meta['redflow/traceId']}.jsonl`));
    expect(events.at(-1)).toMatchObject({ type: 'run.completed' });
  });
});
