// What the MCP server's tests share: the fixture flows, a `redflow mcp` started by the SDK's own
// stdio client, and a run's log followed to its end.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { followJsonlLog } from '../../src/events/jsonlFollow.js';
import { isTerminal, type AgentEvent } from '../../src/events/eventTypes.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'bin', 'redflow.js');
/**
 * The fixture flows folder: ask, typed (an object trigger schema and an outputSchema), slow (a tool
 * that waits until aborted), approve, question, noisy (a tool that writes to stdout), broken (does
 * not validate), and three whose ids make no tool name (team/ask and team_ask: the same; one too long).
 */
export const FLOWS = path.join(REPO, 'test', 'fixtures', 'mcpServer', 'flows');
/** The tools the fixture flows make, sorted. */
export const OFFERED = ['approve', 'ask', 'noisy', 'question', 'slow', 'typed'];

/** The environment of a spawned redflow: no colour, no fault hook. */
export function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && key !== 'REDFLOW_CRASH_AFTER_EVENT') env[key] = value;
  return { ...env, NO_COLOR: '1' };
}

/** `redflow mcp --flows <fixtures> --runs <runsDir>`, connected to the SDK's Client over stdio. */
export async function connectStdio(runsDir: string, extra: readonly string[] = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--flows', FLOWS, '--runs', runsDir, ...extra], env: childEnv(), stderr: 'pipe', cwd: REPO });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'redflow-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** The run's log, followed until its last event is in it (no polling of its own: the follow wakes on writes). */
export async function logToTheEnd(runsDir: string, traceId: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of followJsonlLog(path.join(runsDir, `${traceId}.jsonl`), 0, { traceId, pollMs: 50 })) {
    events.push(event);
    if (isTerminal(event)) break;
  }
  return events;
}

/** The trace id a call's first progress message names (`run <traceId> started`). */
export function traceIdOfProgress(message: string | undefined): string | undefined {
  return /^run (\S+) started$/.exec(message ?? '')?.[1];
}

const INSPECTOR = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');

/** The MCP Inspector's CLI, `mcp-inspector-cli --cli <target…> <options…>`: its stdout as JSON. */
export async function inspector(args: readonly string[]): Promise<unknown> {
  // Run from its own build folder: it looks for its package.json relative to the working directory.
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(INSPECTOR, 'cli.js'), '--cli', ...args], { cwd: INSPECTOR, env: childEnv(), timeout: 30_000 });
  return JSON.parse(stdout) as unknown;
}
