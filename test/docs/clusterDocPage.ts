import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import { CLI, REPO_ROOT } from '../support/cli.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { stopCluster } from '../distributed/clusterSupport.js';
import { redflowArgs } from './docPages.js';

// A page's cluster commands as written, for the doc tests that run them: in a folder with the
// order-status example, against the test server on a prefix of their own, with the workers the
// page starts in the background stopped and the prefix's streams removed afterwards.

/** The NATS server the pages' commands name. */
const PAGE_NATS = 'localhost:4222';

/** Where a page's cluster commands run. */
export interface ClusterDocFolder {
  /** The folder the commands run in (set once the suite has started). */
  readonly dir: string;
  /** The arguments of a page's `npx redflow …` line (see `redflowArgs`); a line naming the server runs on the test server and the page's prefix. */
  argsOf(command: string): string[];
  /** Starts a command the page runs in the background (`… &`), once it says its worker is ready. */
  inBackground(args: readonly string[]): Promise<ChildProcess>;
}

/** Sets up, for the current test file, the folder and the prefix a page's cluster commands run in (`name` names its folder and connection). */
export function clusterDocFolder(name: string): ClusterDocFolder {
  const prefix = uniquePrefix();
  const workers: ChildProcess[] = [];
  let dir = '';
  let nc: NatsConnection;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), `redflow-${name}-`));
    await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
    nc = await connectTestServer(name);
  });
  afterAll(() => stopCluster({ workers, nc, prefix, dir }));

  return {
    get dir() {
      return dir;
    },
    argsOf(command) {
      const args = redflowArgs(command).map((arg) => arg.replace(PAGE_NATS, NATS_URL));
      return command.includes('--nats') ? [...args, '--prefix', prefix] : args;
    },
    inBackground(args) {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
      workers.push(child);
      return new Promise((resolve, reject) => {
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('worker ready')) resolve(child);
        });
        child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before it was ready: ${stderr}`)));
      });
    },
  };
}
