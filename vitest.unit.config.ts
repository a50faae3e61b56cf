import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { configValidators } from './src/editor/configValidatorsPlugin.js';

/**
 * `npm run test:unit`: the tests that need no service and no build, for quick feedback while
 * editing. Left out by name: `*.int.spec.ts` (NATS, PostgreSQL, nats-server processes) and
 * `*.e2e.spec.ts` (the built CLI as a process, the browser); and two checks of what
 * `npm run build` writes: docker-compose.yml's commands against the built CLI, and the editor's
 * production build. `npm test` runs everything.
 */
export default defineConfig({
  plugins: [configValidators(fileURLToPath(new URL('./schemas', import.meta.url)))],
  test: {
    include: ['test/**/*.spec.ts'],
    exclude: [...configDefaults.exclude, '**/*.int.spec.ts', '**/*.e2e.spec.ts', 'test/deploy/compose.spec.ts', 'test/editor/build.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
