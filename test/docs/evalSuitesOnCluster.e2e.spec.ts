import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { clusterDocFolder } from './clusterDocPage.js';
import { codeBlocks, readPage, redflowLines } from './docPages.js';
import { makePageChanges } from './evalSuitesPage.js';

// The cluster part of docs/eval-suites.md as written: the page's suite is recorded and its flow
// changed as the page says (docs/eval-suites.md's own test runs those steps too), then its worker
// runs in the background and its `eval --nats` prints the table the page shows.

const page = readPage('docs/eval-suites.md');
const blocks = codeBlocks(page);
const shell = blocks.filter((block) => block.lang === 'sh');
const clusterBlock = shell.find((block) => block.code.includes('--nats'));
const shownTable = clusterBlock === undefined ? undefined : blocks.slice(blocks.indexOf(clusterBlock) + 1).find((block) => block.lang === '');
const editedCase = blocks.find((block) => block.lang === 'yaml');
const changedNodes = blocks.find((block) => block.lang === 'json');
const cluster = clusterDocFolder('eval-cluster-doc');

describe('docs/eval-suites.md on a cluster', () => {
  it('should evaluate the suite against the changed flow on the cluster, printing the table it shows', async () => {
    if (clusterBlock === undefined || shownTable === undefined || editedCase === undefined || changedNodes === undefined) throw new Error("docs/eval-suites.md has lost its cluster's commands, its table, its case or its changed nodes");
    // The suite, as the page records it.
    for (const command of redflowLines(shell[0]?.code ?? '')) {
      const done = await runCli(cluster.argsOf(command), { cwd: cluster.dir, timeoutMs: 60_000 });
      expect(done.code, `${command}\n${done.stderr}`).toBe(0);
    }
    await makePageChanges(cluster.dir, editedCase.code, changedNodes.code);

    let last;
    for (const command of redflowLines(clusterBlock.code)) {
      if (command.endsWith(' &')) {
        await cluster.inBackground(cluster.argsOf(command));
        continue;
      }
      last = await runCli(cluster.argsOf(command), { cwd: cluster.dir, timeoutMs: 60_000 });
    }
    // Below the page's --min-score? No threshold here: the table, and exit 0.
    expect(last?.code, last?.stderr).toBe(0);
    expect(last?.stdout).toBe(shownTable.code);
  }, 120_000);
});
