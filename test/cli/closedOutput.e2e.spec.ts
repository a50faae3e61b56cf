// `redflow … | head -1`: a reader that goes away before the command has written everything. The
// real CLI (`node bin/redflow.js`, the compiled dist/: build first) is spawned with its stdout or
// stderr a pipe whose reading end this test closes before the child starts, so its first write to
// it fails with EPIPE, as when `head` has exited.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { STACK_FRAME } from '../support/cli.js';
import { BIN, REPO, assertBuilt, example, redflow, tempDirs } from './cliHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** A finished run's log, for replay. */
let log: string;
let logDir: string;

beforeAll(async () => {
  assertBuilt();
  logDir = await dirs.make();
  log = path.join(logDir, 'run.jsonl');
  const made = await redflow(['run', example('order-status'), '--input', 'Where is order A-1001?', '--log', log], { cwd: logDir });
  if (made.code !== 0) throw new Error(`the run to replay failed (${made.code}): ${made.stderr}`);
});

/** Runs the CLI with one of its output streams closed by its reader; the exit and what the other stream got. */
function withClosed(closed: 'stdout' | 'stderr', args: readonly string[], cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; other: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child[closed].destroy();
  const open = closed === 'stdout' ? child.stderr : child.stdout;
  let other = '';
  open.setEncoding('utf8').on('data', (chunk: string) => (other += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redflow ${args.join(' ')} did not end within 15 s with its ${closed} closed; the other stream got:\n${other}`));
    }, 15_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, other });
    });
  });
}

describe.concurrent('redflow with a reader that has gone (| head)', () => {
  const commands: readonly (readonly string[])[] = [
    ['replay', 'run.jsonl'],
    ['replay', 'run.jsonl', '--json'],
    ['validate', example('order-status')],
    ['validate', example('order-status'), '--json'],
    ['run', example('order-status'), '--input', 'x', '--json'],
    ['run', example('order-status'), '--input', 'x'],
    ['--help'],
    ['--version'],
    ['replay', '--help'],
  ];

  const cases = commands.map((args) => ({ args, line: args.map((arg) => path.relative(REPO, arg) || arg).join(' ') }));

  it.for(cases)('should end quietly with exit 0 when stdout is closed: redflow $line', async ({ args }, { expect }) => {
    const result = await withClosed('stdout', args, logDir);
    expect(result.other).not.toMatch(STACK_FRAME);
    expect(result.other).not.toContain('EPIPE');
    expect(result.signal).toBeNull();
    expect(result.code, result.other).toBe(0);
  });

  it('should end quietly with exit 0 when stderr (where a run shows its progress) is closed', async ({ expect }) => {
    const result = await withClosed('stderr', ['run', example('order-status'), '--input', 'x'], await dirs.make());
    expect(result.other).not.toMatch(STACK_FRAME);
    expect(result.signal).toBeNull();
    expect(result.code, result.other).toBe(0);
  });

  it('should keep the usual exit code of a command that fails and cannot say why (stderr closed)', async ({ expect }) => {
    const result = await withClosed('stderr', ['validate', 'nope.json'], await dirs.make());
    expect(result.code).toBe(66);
  });
});
