import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './clusterSupport.js';

// `redflow worker` processes for the tests that watch a worker from start to exit: their whole
// standard error, whether they became ready, and how they ended. They run the built dist/.

const BIN = path.join(ROOT, 'bin/redflow.js');

/** How a process ended: its exit code, or the signal that ended it. */
export interface Ending {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A `redflow` process started by a test. */
export interface RedflowProcess {
  readonly child: ChildProcess;
  /** Everything it wrote on standard error so far. */
  stderr(): string;
  /** Resolves once it has ended. */
  readonly ended: Promise<Ending>;
  /** Resolves when a `redflow worker` says it is ready; rejects if it ends before. */
  ready(): Promise<void>;
  /** Resolves once its standard error holds `text`; rejects if it ends before. */
  waitFor(text: string): Promise<void>;
}

/**
 * Starts `node bin/redflow.js <args>` with this process's environment minus every model and
 * Redflow setting (`OPENAI_*`, `REDFLOW_*`), plus `env`: what a worker may use is only what the
 * test gives it.
 */
export function startRedflow(args: readonly string[], env: Record<string, string> = {}): RedflowProcess {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|REDFLOW_)/.test(key)) clean[key] = value;
  }
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...clean, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout?.resume();
  const ended = new Promise<Ending>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const waitFor = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stderr.includes(text)) {
          child.stderr?.off('data', check);
          resolve();
        }
      };
      child.stderr?.on('data', check);
      check();
      void ended.then(({ code, signal }) => reject(new Error(`redflow ${args.join(' ')} ended (${code ?? signal}) before saying "${text}":\n${stderr}`)));
    });
  return { child, stderr: () => stderr, ended, waitFor, ready: () => waitFor('worker ready') };
}

/** Resolves with how `process` ended, or `'still running'` if it has not within `ms`. */
export async function endingWithin(process: RedflowProcess, ms: number): Promise<Ending | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
  try {
    return await Promise.race([process.ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Ends every process still running (SIGKILL): for `afterAll`. */
export async function killAll(processes: readonly RedflowProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (process) => {
      if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
      await process.ended;
    }),
  );
}
