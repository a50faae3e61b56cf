import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';

/** The repository root (this file is test/support/cli.ts). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The real command, as installed: it runs the compiled dist/ (build first). */
export const CLI = path.join(REPO_ROOT, 'bin', 'redflow.js');

/** What one run of the command did. */
export interface CliResult {
  /** The exit code, or null when a signal ended the process. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node bin/redflow.js <args>` in a child process. Asynchronous on purpose: a fake server in
 * this process must keep answering while the child runs. The environment is this process's
 * without any model setting (OPENAI_*, REDFLOW_*), plus `env`.
 */
export function runCli(
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: Readonly<Record<string, string>>; readonly timeoutMs?: number },
): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(OPENAI_|REDFLOW_)/.test(key)) continue;
    env[key] = value;
  }
  Object.assign(env, { NO_COLOR: '1' }, options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/** One event of a JSONL log, as read by {@link readVerifiedLog}. */
export interface LoggedEvent {
  readonly seq: number;
  readonly type: string;
  readonly traceId: string;
  readonly data: Record<string, unknown> & {
    outcome?: { status: string; reason: string; answer?: string; error?: { code: string; message: string; hint?: string } };
  };
}

/**
 * Reads a run's JSONL log independently of the code under test and checks every line: the
 * `<crc32 as 8 hex> <json>\n` framing, the checksum over the JSON's UTF-8 bytes continued from the
 * previous line's checksum, and seq 1, 2, 3, …
 * Throws on the first line that does not verify.
 */
export async function readVerifiedLog(file: string): Promise<{ readonly text: string; readonly events: LoggedEvent[] }> {
  const text = await readFile(file, 'utf8');
  if (!text.endsWith('\n')) throw new Error(`${file}: the last record is not terminated by a newline`);
  const events: LoggedEvent[] = [];
  // Each checksum continues the previous record's (0 before the first): a chain.
  let chain = 0;
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, index) => {
      const match = /^([0-9a-f]{8}) (.*)$/s.exec(line);
      if (!match) throw new Error(`${file} line ${index + 1}: not "<crc32> <json>"`);
      const [, stored, json] = match as unknown as [string, string, string];
      chain = crc32(Buffer.from(json, 'utf8'), chain);
      const actual = chain.toString(16).padStart(8, '0');
      if (actual !== stored) throw new Error(`${file} line ${index + 1}: checksum ${stored}, computed ${actual}`);
      const event = JSON.parse(json) as LoggedEvent;
      if (event.seq !== index + 1) throw new Error(`${file} line ${index + 1}: seq ${event.seq}`);
      events.push(event);
    });
  return { text, events };
}

/** A stack trace line (`    at fn (file:1:2)`), which the command must never print. */
export const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m;
