import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { configValidators } from './src/editor/configValidatorsPlugin.js';

/**
 * The test files that drive headless Chromium. They run in the `browser` project, whose files are
 * not isolated from each other: a test process runs several of them in turn and they share the
 * Chromium it launched for the first (test/support/sharedChromium.ts; each file gets pages in
 * contexts of its own), instead of each starting and waiting for one.
 */
export const BROWSER_FILES = ['test/editor/*.e2e.spec.ts', 'test/node-red/editor.e2e.spec.ts', 'test/node-red/serveNodeRed.e2e.spec.ts', 'test/server/aguiChat.e2e.spec.ts'];

/**
 * Files that start processes heavy enough to starve a neighbour on a 2-core machine (Node-RED, a
 * Chromium of their own, a three-server NATS cluster) or whose guarantee is a wall-clock bound
 * (liveness, load, leader elections within a lease). They run one at a time, after the other
 * files, so the rest of the suite can run several files side by side.
 */
export const ALONE_FILES = [
  'test/node-red/*.e2e.spec.ts',
  'test/inspect/inspectorPage.e2e.spec.ts',
  'test/server/serveNats.e2e.spec.ts',
  'test/distributed/liveness.e2e.spec.ts',
  'test/distributed/load.e2e.spec.ts',
  'test/distributed/clusterFaults.e2e.spec.ts',
  'test/distributed/clusterPartitions.e2e.spec.ts',
  'test/nats/partitionFailover.e2e.spec.ts',
  'test/distributed/toolResultPartition.int.spec.ts',
  'test/distributed/startDuringElection.e2e.spec.ts',
  'test/distributed/heartbeatOutage.int.spec.ts',
  'test/distributed/takeoverRetry.int.spec.ts',
  'test/distributed/replicas.e2e.spec.ts',
  'test/deploy/composeCluster.spec.ts',
];

/** Test files run side by side in the first group: REDFLOW_TEST_WORKERS, else vitest's default. */
const workers = Number(process.env.REDFLOW_TEST_WORKERS) || undefined;

export default defineConfig({
  // The editor's modules under test import its precompiled config validators.
  plugins: [configValidators(fileURLToPath(new URL('./schemas', import.meta.url)))],
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A polled condition (a page's fetch, a log a worker writes) waits up to 10 s, not vitest's
    // default 1 s: on a loaded 2-core CI machine a page's first request can take longer than that.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // `vitest run` (npm test) runs every file under test/, in three groups, one after another: the
    // bulk side by side, then the files that must run alone, then the browser files in one process.
    projects: [
      { extends: true, test: { name: 'node', include: ['test/**/*.spec.ts'], exclude: [...configDefaults.exclude, ...BROWSER_FILES, ...ALONE_FILES], maxWorkers: workers, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE_FILES, exclude: [...configDefaults.exclude, ...BROWSER_FILES], maxWorkers: 1, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'browser', include: BROWSER_FILES, isolate: false, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
  },
});
