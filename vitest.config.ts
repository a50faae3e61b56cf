import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { configValidators } from './src/editor/configValidatorsPlugin.js';

export default defineConfig({
  // The editor's modules under test import its precompiled config validators.
  plugins: [configValidators(fileURLToPath(new URL('./schemas', import.meta.url)))],
  test: {
    include: ['test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
