import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../support/cli.js';

// What a `redflow` process loads, recorded by a module hook registered with --import: `--version`
// and `--help` load the command table and nothing of any command; a scripted `run` loads no NATS,
// no provider SDK, no server, editor, inspector or telemetry, no schema compiler (ajv) and no
// TypeScript loader (issue: a CLI that starts like node).

/** Packages and folders of dist/ that only some commands or flows need. */
const HEAVY = [
  '@nats-io/',
  'openai/',
  '@anthropic-ai/sdk/',
  '@modelcontextprotocol/sdk/',
  '@a2a-js/sdk/',
  // ajv's compiler: the contracts are precompiled by the build (they need only its small runtime
  // helpers) and plain tool schemas are checked without it.
  '/ajv/dist/ajv.js',
  '/ajv/dist/compile/',
  // TypeScript: tools written in .mjs need no loader.
  '/tsx/',
  '/typescript/',
  '@opentelemetry/',
  '/ws/',
  '@statelyai/inspect/',
  '/dist/server/',
  '/dist/editor/',
  '/dist/nats/',
  '/dist/inspect/inspectSession.js',
  '/dist/inspect/inspectorRelay.js',
  '/dist/mcpServer/',
  '/dist/evals/',
];

let dir: string;
let hook: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-startup-'));
  hook = path.join(dir, 'record.mjs');
  // Appends every module URL the process resolves to the file REDFLOW_TEST_LOADED names, and at
  // exit every CommonJS file it required (require() does not pass the resolve hook on Node 20).
  await writeFile(
    hook,
    `import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
const required = createRequire(import.meta.url).cache;
process.on('exit', () => {
  for (const file of Object.keys(required)) appendFileSync(process.env.REDFLOW_TEST_LOADED, pathToFileURL(file).href + '\\n');
});
register('data:text/javascript,' + encodeURIComponent(\`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.REDFLOW_TEST_LOADED, resolved.url + '\\\\n');
  return resolved;
}\`));
`,
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI with the hook and returns its exit code and the module URLs it resolved. */
async function loadedBy(args: readonly string[]): Promise<{ code: number | null; urls: string[] }> {
  const record = path.join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(record, '');
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(hook).href, CLI, ...args], {
      cwd: dir,
      env: { ...process.env, REDFLOW_TEST_LOADED: record, NO_COLOR: '1' },
      stdio: 'ignore',
    });
    child.once('error', reject);
    child.once('close', resolve);
  });
  const urls = (await readFile(record, 'utf8')).split('\n').filter((url) => url !== '');
  return { code, urls };
}

const heavyIn = (urls: readonly string[]) => urls.filter((url) => url.startsWith('file:') && HEAVY.some((part) => fileURLToPath(url).includes(part)));
const ownModules = (urls: readonly string[]) => new Set(urls.filter((url) => url.startsWith(pathToFileURL(path.join(REPO_ROOT, 'dist')).href)));

describe('what a redflow process loads', () => {
  it('should answer --version and --help from the command table, loading no command and no package', async () => {
    for (const flag of ['--version', '--help']) {
      const { code, urls } = await loadedBy([flag]);
      expect(code, flag).toBe(0);
      expect(urls.filter((url) => url.includes('/node_modules/')), flag).toEqual([]);
      // The entry, the table, output, exit codes, errors and their kinds, the version, secrets.
      expect(ownModules(urls).size, flag).toBeLessThanOrEqual(12);
    }
  });

  it('should run the demo flow without NATS, provider SDKs, the server, the editor, the inspector, telemetry, ajv or a TypeScript loader', async () => {
    const flow = path.join(REPO_ROOT, 'examples/order-status/flow.json');
    const { code, urls } = await loadedBy(['run', flow, '--input', 'Where is order A-1001?', '--log', 'run.jsonl']);
    expect(code).toBe(0);
    expect(heavyIn(urls)).toEqual([]);
  });

  it('should catch a heavy module when one is loaded: `redflow tail --help` loads the NATS client', async () => {
    const { urls } = await loadedBy(['tail', '--help']);
    expect(heavyIn(urls).some((url) => url.includes('@nats-io/'))).toBe(true);
  });
});
