import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import type { AgentEvent, AgentEventDataMap } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';

/** The repository's root: the MCP servers from npm are in its node_modules. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `server-everything` over stdio, as its package's bin starts it. */
export const EVERYTHING_STDIO = { command: process.execPath, args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };

/** The test fixture server whose tools crash, hang, fail or answer too much. */
export const FAULTY = { command: process.execPath, args: [path.join(ROOT, 'test/fixtures/mcp/faultyServer.mjs')] };

export const tool = (name: string, input: unknown) => ({ action: 'tool', tool: name, input, confidence: 0.5 });
export const final = (message: string) => ({ action: 'final', message, confidence: 0.9 });

/**
 * Writes a flow with one `tool.mcp` node (id `mcp`, connected to the agent) and a scripted model
 * into `dir/<name>.json`; `agent` is merged into the agent core's config.
 */
export async function writeMcpFlow(
  dir: string,
  name: string,
  mcp: Record<string, unknown>,
  answers: readonly unknown[],
  agent: Record<string, unknown> = {},
  /** More tool nodes, each connected to the agent. */
  extra: readonly Record<string, unknown>[] = [],
): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(
    file,
    JSON.stringify({
      id: name,
      nodes: [
        { id: 'in', type: 'trigger.input' },
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 6, ...agent } },
        { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers } },
        { id: 'mcp', type: 'tool.mcp', config: mcp },
        ...extra,
      ],
      edges: [
        { id: 'e1', source: 'in', target: 'agent' },
        { id: 'e2', source: 'agent', target: 'model' },
        { id: 'e3', source: 'agent', target: 'mcp' },
        ...extra.map((node) => ({ id: `e-${String(node.id)}`, source: 'agent', target: node.id })),
      ],
    }),
  );
  return file;
}

/** The data of each event of `type` in `events`, in log order. */
export function dataOf<T extends AgentEvent['type']>(events: readonly AgentEvent[], type: T): AgentEventDataMap[T][] {
  return events.filter((event) => event.type === type).map((event) => event.data as AgentEventDataMap[T]);
}

/** Runs a flow file embedded with the input 'go', its log in `dir/runs/<traceId>.jsonl`; returns its result and its events. */
export async function runMcpFlow(dir: string, flowPath: string, traceId: string, more: Partial<Parameters<typeof runFlowFile>[0]> = {}) {
  const logPath = path.join(dir, 'runs', `${traceId}.jsonl`);
  const started = await runFlowFile({ flowPath, input: 'go', traceId, logPath, fsync: 'never', ...more });
  const result = await started.finished();
  const read = await readJsonlLog(logPath);
  return { result, events: [...read.events], problems: read.problems, logPath };
}

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** `server-everything` in its Streamable HTTP mode on a free port; resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_STDIO.args[0] ?? '', 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${seen}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill();
      await once(child, 'exit');
    },
  };
}
