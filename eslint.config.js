// Lint: typescript-eslint's recommended rules, plus the purity rule (docs/architecture.md) — the statechart,
// the fold and answer validation import no I/O (only types may come from elsewhere).
import vitest from '@vitest/eslint-plugin';
import tseslint from 'typescript-eslint';

const pure = ['src/machines/**/*.ts', 'src/events/evolve.ts', 'src/events/eventTypes.ts', 'src/events/resumePoint.ts', 'src/events/eventOrder.ts', 'src/events/waits.ts', 'src/events/stopConditions.ts', 'src/validation/**/*.ts', 'src/flows/nodeTypes.ts', 'src/flows/edgeRules.ts'];

// The editor runs in the browser: its globals, and no Node module (vite.config.ts is its build script, run by Node).
const browserGlobals = Object.fromEntries(
  ['window', 'document', 'navigator', 'location', 'sessionStorage', 'localStorage', 'fetch', 'EventSource', 'MessageEvent', 'HTMLElement', 'console', 'setTimeout', 'clearTimeout', 'requestAnimationFrame'].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test-artifacts/**', '.redflow/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'off',
    },
  },
  {
    files: pure,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'fs/*', 'path', 'http', 'https', 'net', 'child_process', 'crypto', 'os'], message: 'pure code: no Node I/O (effects live in actors).' },
            { group: ['**/actors/*', '**/actors/**', '**/runtime/**', '**/cli/**', '**/contracts/schemas*', 'ajv'], allowTypeImports: true, message: 'pure code may only import types from actors, runtime, contracts and ajv.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'Date', message: 'pure code: the clock is injected.' }, { name: 'setTimeout', message: 'pure code: timers belong to the actor system clock.' }, { name: 'fetch', message: 'pure code: no I/O.' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'pure code: no randomness.' }, { object: 'Date', property: 'now', message: 'pure code: the clock is injected.' }],
    },
  },
  {
    files: ['src/editor/**/*.ts', 'src/editor/**/*.tsx'],
    languageOptions: { globals: browserGlobals, parserOptions: { ecmaFeatures: { jsx: true } } },
  },
  // Tests: every test asserts something (helpers named expect*/assert* count), and no expect hides
  // behind a condition (a warning until the remaining ones are rewritten: `npx eslint test` lists them).
  // A promise a test forgets to await lets it pass before what it checks has happened: tests get
  // no-floating-promises, with the type information it needs (the source's own are awaited by
  // review and by the runs' tests; typing all of it would make `eslint .` several times slower).
  {
    files: ['test/**/*.ts'],
    plugins: { vitest },
    languageOptions: { parserOptions: { project: ['./tsconfig.json', './src/editor/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'vitest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*', 'assert*', '*.expect*'] }],
      'vitest/no-conditional-expect': 'error',
    },
  },
  {
    files: ['src/editor/**/*.ts', 'src/editor/**/*.tsx'],
    ignores: ['src/editor/vite.config.ts', 'src/editor/configValidatorsPlugin.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'fs/*', 'path', 'http', 'https', 'net', 'child_process', 'crypto', 'os', 'url', 'stream', 'worker_threads'], message: 'the editor runs in the browser: no Node modules.' },
            {
              group: ['**/actors/**', '**/runtime/**', '**/cli/**', '**/nats/**', '**/contracts/schemas*', '**/flows/loadFlow*', '**/flows/validateFlow*', '**/flows/agentConfig*', '**/server/*', '!**/server/apiTypes*'],
              allowTypeImports: true,
              message: 'the editor may only import browser-safe modules (types from the rest).',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'process', message: 'the editor runs in the browser.' }, { name: 'Buffer', message: 'the editor runs in the browser.' }, { name: 'require', message: 'the editor runs in the browser.' }],
    },
  },
);
