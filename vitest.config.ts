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

export default defineConfig({
  // The editor's modules under test import its precompiled config validators.
  plugins: [configValidators(fileURLToPath(new URL('./schemas', import.meta.url)))],
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // `vitest run` (npm test) runs both projects: every file under test/.
    projects: [
      { extends: true, test: { name: 'node', include: ['test/**/*.spec.ts'], exclude: [...configDefaults.exclude, ...BROWSER_FILES] } },
      { extends: true, test: { name: 'browser', include: BROWSER_FILES, isolate: false } },
    ],
  },
});
