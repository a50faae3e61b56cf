// Helpers for the end-to-end tests of the `redflow` command (test/cli/*.e2e.spec.ts).
//
// These tests spawn the real, built CLI (`node bin/redflow.js …`), which imports dist/. They do not
// build it themselves: `npm test` builds first (the `pretest` script); when running vitest directly,
// run `npm run build` before (`npm run build && npx vitest run test/cli`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'bin', 'redflow.js');
export const EXAMPLES = path.join(REPO, 'examples');

/** The example flows, by directory name. */
export const example = (name: string) => path.join(EXAMPLES, name, 'flow.json');

/** Order-status's final answer (examples/order-status/answers.json). */
export const ORDER_ANSWER =
  'Order A-1001 shipped with FastShip (tracking FS-77812). It was last scanned at the Lyon sorting centre and should arrive on 2026-11-23.';

/** Throws a clear message when dist/ has not been built. */
export function assertBuilt(): void {
  if (!existsSync(path.join(REPO, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` before these tests (npm test does it in pretest)');
  }
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node bin/redflow.js ...args` in `cwd`, without colour, and collects its output. */
export function redflow(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...options.env };
  delete env.REDFLOW_CRASH_AFTER_EVENT;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redflow ${args.join(' ')} did not finish within ${options.timeoutMs ?? 15_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 15_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Makes fresh temporary directories and removes them all at the end. */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(): Promise<string> {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-cli-'));
      made.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

/** One line of the live progress or of a replay's timeline: `#2  tool   track_shipment  conf 0.80  1 ms`. */
export interface TimelineLine {
  readonly iteration: number;
  readonly action: string;
  /** The tool, or the error code; '' for a final answer. */
  readonly what: string;
}

/** The timeline lines of some output, in order. */
export function timelineLines(text: string): TimelineLine[] {
  const lines: TimelineLine[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s+#(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const rest = match[3] ?? '';
    lines.push({ iteration: Number(match[1]), action: match[2] ?? '', what: rest.startsWith('conf ') ? '' : (rest.split(/\s+/)[0] ?? '') });
  }
  return lines;
}

/** The `log: <path>` a run prints on stderr, resolved against its cwd. */
export function logPathOf(stderr: string, cwd: string): string {
  const match = /^log: (\S+)/m.exec(stderr);
  if (!match?.[1]) throw new Error(`no "log:" line in stderr:\n${stderr}`);
  return path.resolve(cwd, match[1]);
}

/** A JSONL log's records: each line is `<crc32 hex> <json>`. */
export interface LogRecord {
  readonly seq: number;
  readonly type: string;
  readonly iteration: number;
  readonly data: Record<string, unknown>;
}

/** The lines of a JSONL log (without the empty string after the last newline). */
export function logLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Parses the records of a complete JSONL log (throws on a damaged line). */
export function parseLog(text: string): LogRecord[] {
  return logLines(text).map((line, index) => {
    const match = /^[0-9a-f]{8} (.*)$/.exec(line);
    if (!match?.[1]) throw new Error(`log line ${index + 1} is not "<checksum> <json>": ${line.slice(0, 80)}`);
    return JSON.parse(match[1]) as LogRecord;
  });
}

/** Reads a file as text. */
export const readText = (file: string) => readFile(file, 'utf8');

/** The JSON the CLI prints with `run --json` / `resume --json`. */
export interface RunJson {
  readonly traceId: string;
  readonly outcome: { status: string; reason: string; answer?: string; error?: { code: string; message: string } };
  readonly envelope: {
    input: unknown;
    memory?: { turns: { input: unknown; answer?: string; outcome: string; traceId: string }[] };
    tools: { history: { tool: string; status: string; output?: unknown }[] };
    observability: { traceId: string; outcome?: unknown; events: unknown[] };
  } & Record<string, unknown>;
  readonly log: string;
}

type FlowNode = { id: string; type: string; config?: Record<string, unknown> } & Record<string, unknown>;
export interface FlowJson {
  nodes: FlowNode[];
  edges: { id: string; source: string; target: string; kind?: string }[];
  [key: string]: unknown;
}

/**
 * Writes a copy of an example flow into `dir` (as `flow.json` unless `name` is given), with the
 * files it names (tool modules, answers file) copied beside it at the same relative paths: a flow
 * may only name files inside its own folder (or an --allow-files one). A memory.kv node's path is
 * dropped, so its memory lives under `dir/.redflow/memory`.
 */
export async function copyExampleFlow(name: string, dir: string, edit?: (flow: FlowJson) => void, fileName = 'flow.json'): Promise<string> {
  const exampleDir = path.join(EXAMPLES, name);
  const flow = JSON.parse(await readText(path.join(exampleDir, 'flow.json'))) as FlowJson;
  delete flow.$schema;
  for (const node of flow.nodes) {
    const config = node.config;
    if (!config) continue;
    const named = node.type === 'tool.module' ? config.module : node.type === 'model.llm' ? config.answersFile : undefined;
    if (typeof named === 'string') await cp(path.resolve(exampleDir, named), path.resolve(dir, named));
    if (node.type === 'memory.kv') delete config.path;
  }
  edit?.(flow);
  const file = path.join(dir, fileName);
  await writeFile(file, JSON.stringify(flow, null, 2));
  return file;
}

/**
 * A small valid flow: trigger → agent (maxIterations 2, tool lookup_order) → inline scripted model
 * answering "ok" at once, with order-status's lookup_order tool (named by its absolute path in the
 * examples: a run needs {@link ALLOW_EXAMPLES}).
 */
export function smallFlow(): FlowJson {
  return {
    id: 'small',
    version: 1,
    start: 'in',
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 2, allowedTools: ['lookup_order'] } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'ok', confidence: 0.9 }] } },
      { id: 'lookup_order', type: 'tool.module', config: { module: path.join(EXAMPLES, 'order-status', 'tools', 'lookupOrder.mjs') } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'lookup_order' },
    ],
  };
}

/** The `--allow-files` option a run of {@link smallFlow} needs: its tool module is in the examples. */
export const ALLOW_EXAMPLES = ['--allow-files', EXAMPLES] as const;

/** Writes `value` as JSON (or a string as is) to `dir/name` and returns the path. */
export async function writeIn(dir: string, name: string, value: unknown): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}
