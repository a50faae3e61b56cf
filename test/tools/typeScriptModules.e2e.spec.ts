import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moduleLoaderFor } from '../../src/typeScriptModules.js';
import { REPO_ROOT } from '../support/cli.js';

// TypeScript tool modules as the built package loads them, each in a fresh Node process (the one
// running this file: Node 20 in the full pass, 22 and 24 in the Node-version passes). Where Node
// strips types itself, a TypeScript tool loads without tsx; where it cannot (Node 20, an enum),
// tsx does; a tool that throws while loading is TOOL_MODULE_INVALID either way.

const run = promisify(execFile);
const nodeStripsTypes = moduleLoaderFor('probe.ts') === 'node';

let dir: string;

/** Loads `tools/<file>` through dist/'s loadModuleTool in a fresh process: the tool's answer (or its error) and whether tsx loaded. */
async function loadInFreshNode(file: string): Promise<{ answer?: unknown; error?: { code: string; message: string }; tsxLoaded: boolean }> {
  const probe = path.join(dir, `probe-${file}.mjs`);
  await writeFile(
    probe,
    `import { loadModuleTool } from ${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist/index.js')).href)};
import { writeFileSync } from 'node:fs';
let report;
try {
  const tool = await loadModuleTool({ module: ${JSON.stringify(`tools/${file}`)} }, ${JSON.stringify(dir)});
  report = { answer: await tool.execute({ a: 2, b: 3 }, { signal: new AbortController().signal, idempotencyKey: 'k', traceId: 't', iteration: 1 }) };
} catch (error) {
  report = { error: { code: error.code, message: error.message } };
}
writeFileSync(${JSON.stringify(`${probe}.json`)}, JSON.stringify(report));
`,
  );
  // scripts/loaded-modules.mjs imports the probe and lists every file the import loaded.
  const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, 'scripts/loaded-modules.mjs'), probe], { cwd: dir });
  const loaded = JSON.parse(stdout) as { files: string[] };
  const report = JSON.parse(await readFile(`${probe}.json`, 'utf8')) as { answer?: unknown; error?: { code: string; message: string } };
  return { ...report, tsxLoaded: loaded.files.some((loadedFile) => loadedFile.includes(`${path.sep}node_modules${path.sep}tsx${path.sep}`)) };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-ts-tools-'));
  await mkdir(path.join(dir, 'tools'));
  const tool = (body: string) => `${body}
const add: { name: string; description: string; inputSchema: object; execute(input: { a: number; b: number }): unknown } = {
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: { type: 'object' },
  execute: ({ a, b }) => ({ sum: a + b }),
};
export default add;
`;
  await writeFile(path.join(dir, 'tools/erasable.ts'), tool("import type { ToolDefinition } from 'redflow';\ntype Unused = ToolDefinition;"));
  await writeFile(path.join(dir, 'tools/with-enum.ts'), tool('enum Kind { Sum }\nexport const kind = Kind.Sum;'));
  await writeFile(path.join(dir, 'tools/throws.ts'), tool("const port: number = Number('x');\nif (Number.isNaN(port)) throw new Error('the tool needs SHOP_PORT');"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('which loader imports a tool module', () => {
  it("should use Node's own type stripping only where Node reports it, and never for .tsx", () => {
    expect(moduleLoaderFor('tools/add.ts', { typescript: 'strip' })).toBe('node');
    expect(moduleLoaderFor('tools/add.mts', { typescript: 'transform' })).toBe('node');
    expect(moduleLoaderFor('tools/add.tsx', { typescript: 'strip' })).toBe('tsx');
    // Type stripping turned off (--no-experimental-strip-types).
    expect(moduleLoaderFor('tools/add.ts', { typescript: false })).toBe('tsx');
    // Node 20 has no process.features.typescript at all.
    expect(moduleLoaderFor('tools/add.ts', {})).toBe('tsx');
    expect(moduleLoaderFor('tools/add.mjs', {})).toBe('node');
  });
});

describe('TypeScript tool modules in a fresh Node process', () => {
  it(`should load and run an erasable TypeScript tool ${nodeStripsTypes ? "with Node's own type stripping, without loading tsx" : 'through tsx on a Node without type stripping'}`, async () => {
    const { answer, error, tsxLoaded } = await loadInFreshNode('erasable.ts');

    expect(error).toBeUndefined();
    expect(answer).toEqual({ sum: 5 });
    expect(tsxLoaded).toBe(!nodeStripsTypes);
  }, 60_000);

  it('should fall back to tsx for TypeScript that Node cannot strip (an enum)', async () => {
    const { answer, error, tsxLoaded } = await loadInFreshNode('with-enum.ts');

    expect(error).toBeUndefined();
    expect(answer).toEqual({ sum: 5 });
    expect(tsxLoaded).toBe(true);
  }, 60_000);

  it('should report a TypeScript tool that throws while loading as TOOL_MODULE_INVALID naming the file, not its absolute path', async () => {
    const { error } = await loadInFreshNode('throws.ts');

    expect(error?.code).toBe('TOOL_MODULE_INVALID');
    expect(error?.message).toContain('tool module "tools/throws.ts" failed to load: the tool needs SHOP_PORT');
    expect(error?.message).not.toContain(dir);
  }, 60_000);
});
