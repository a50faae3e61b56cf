import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { EVERYTHING_STDIO, final, writeMcpFlow } from '../support/mcpFlows.js';

/** `redflow validate` with tool.mcp nodes, through the real command (build first); test/docs/mcpPage.spec.ts runs the example. */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('redflow validate with MCP servers', () => {
  it('starts each server and lists the tools it brings, as the model will see them', async () => {
    const flowPath = await writeMcpFlow(dir, 'listed', { ...EVERYTHING_STDIO, include: ['echo', 'get-sum'], prefix: 'ev_' }, [final('ok')]);
    const text = await runCli(['validate', flowPath], { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("MCP server 'mcp': 2 tools: ev_echo, ev_get-sum");
    const json = await runCli(['validate', flowPath, '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, mcpTools: { mcp: ['ev_echo', 'ev_get-sum'] } });
  });

  it('reports a server that cannot start as MCP_SERVER_UNAVAILABLE naming it, with a hint, and exits 65', async () => {
    const flowPath = await writeMcpFlow(dir, 'gone', { command: 'redflow-no-such-mcp-server' }, [final('ok')]);
    const result = await runCli(['validate', flowPath], { cwd: dir });
    expect(result.code).toBe(65);
    expect(result.stdout).toContain('MCP_SERVER_UNAVAILABLE');
    expect(result.stdout).toContain("MCP server 'mcp'");
    expect(result.stdout).toContain('PATH');
  });

  it('reports a bad tool.mcp config (both a command and a url) without starting anything', async () => {
    const flowPath = await writeMcpFlow(dir, 'both', { command: 'x', url: 'http://127.0.0.1:9/mcp' }, [final('ok')]);
    const result = await runCli(['validate', flowPath], { cwd: dir });
    expect(result.code).toBe(65);
    expect(result.stdout).toContain('NODE_CONFIG_INVALID');
    expect(result.stdout).toContain('both "command" and "url"');
  });
});
