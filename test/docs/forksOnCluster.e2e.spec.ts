import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { clusterDocFolder } from './clusterDocPage.js';
import { codeBlocks, readPage, redflowLines } from './docPages.js';

// The cluster part of docs/forks.md as written: its worker runs in the background, then its run,
// fork and tree commands run in order against the test server, on a prefix of their own. The
// tree looks as the page shows.

const page = readPage('docs/forks.md');
const blocks = codeBlocks(page);
const commands = blocks
  .filter((block) => block.lang === 'sh')
  .flatMap((block) => redflowLines(block.code))
  .filter((line) => line.includes('--nats'));
const shownTree = blocks.find((block) => block.lang === '' && block.code.includes('run order-a1001'));
const cluster = clusterDocFolder('forks-cluster-doc');

describe('docs/forks.md on a cluster', () => {
  it('should fork a run of the cluster on it and show the fork under its parent', async () => {
    if (shownTree === undefined || commands.length < 4) throw new Error("docs/forks.md has lost its cluster's commands or its tree");
    let last;
    for (const command of commands) {
      if (command.endsWith(' &')) {
        await cluster.inBackground(cluster.argsOf(command));
        continue;
      }
      last = await runCli(cluster.argsOf(command), { cwd: cluster.dir, timeoutMs: 60_000 });
      expect(last.code, `${command}\n${last.stderr}`).toBe(0);
    }
    // The tree: the same shape as the page's, the fork's trace id aside.
    const shape = (text: string) => text.trim().split('\n').map((line) => line.replace(/→ run \S+/, '→ run <id>'));
    expect(shape(last?.stdout ?? '')).toEqual(shape(shownTree.code));
  }, 120_000);
});
