// The blocks of docs/mcp.md run as written: each JSON node is a tool.mcp node the flow validation
// accepts, each `redflow` command of the sh block runs against examples/ with the output the page
// says, and the TypeScript block is compiled by codeBlocks.spec.ts with the other pages' blocks.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { runCli } from '../support/cli.js';
import { ROOT, codeBlocks, readPage, section } from './docPages.js';

const page = readPage('docs/mcp.md');
// The blocks of its flow-file section; those of the cluster and Node-RED sections run in mcpPageHosts.e2e.spec.ts.
const blocks = codeBlocks(section('docs/mcp.md', '### In a flow file'));
let dir: string;

beforeAll(async () => {
  // The commands name examples/…: run them in a copy, so the runs' logs stay out of the repository.
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-doc-'));
  await cp(path.join(ROOT, 'examples/mcp-filesystem'), path.join(dir, 'examples/mcp-filesystem'), { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('docs/mcp.md', () => {
  it('shows tool.mcp nodes the flow validation accepts', () => {
    const nodes = blocks.filter((block) => block.lang === 'json').map((block) => JSON.parse(block.code) as { id: string; type: string });
    expect(nodes.map((node) => node.type)).toEqual(['tool.mcp', 'tool.mcp']);
    for (const node of nodes) {
      const result = validateFlow({
        nodes: [{ id: 'agent', type: 'agent.core', config: { strategy: 'react' } }, { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [] } }, node],
        edges: [{ id: 'e1', source: 'agent', target: 'model' }, { id: 'e2', source: 'agent', target: node.id }],
      });
      expect(result.ok ? [] : result.errors).toEqual([]);
    }
  });

  it('runs its commands: validate lists the server\'s tools, run reads the shopping list', async () => {
    const commands = blocks.filter((block) => block.lang === 'sh').flatMap((block) => block.code.trim().split('\n'));
    expect(commands).toHaveLength(2);
    const outputs: string[] = [];
    for (const command of commands) {
      const args = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '').slice(1);
      const result = await runCli(args, { cwd: dir, timeoutMs: 30_000 });
      expect(result.code, `${command}\n${result.stderr}`).toBe(0);
      outputs.push(result.stdout);
    }
    const printed = /`validate` prints `([^`]+)`/.exec(page.replace(/\n/g, ' '))?.[1];
    expect(outputs[0]).toContain(printed);
    expect(outputs[1]).toContain('milk, bread and coffee beans');
  });
});
