import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The README says which Node versions Redflow supports, that CI tests each, and which one the
// Docker image runs on. These keep package.json's engines, .ci/run and the Dockerfile saying the same.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFile(path.join(root, file), 'utf8');

/** The Node majors the README names as supported. */
const SUPPORTED = [20, 22, 24];

describe('supported Node versions', () => {
  it('should be named in the README, and all allowed by package.json engines', async () => {
    expect(await read('README.md')).toContain(`Supported Node versions: ${SUPPORTED.slice(0, -1).join(', ')} and ${SUPPORTED.at(-1)}`);
    const { engines } = JSON.parse(await read('package.json')) as { engines: { node: string } };
    // `>=20.19`: every later major too, so 22 and 24.
    expect(engines.node).toBe('>=20.19');
  });

  it('should each be tested by CI: the machine\'s Node (20), then the others from the npm registry', async () => {
    const ci = await read('.ci/run');
    const loop = /for major in ([\d ]+); do\n([\s\S]*?)\ndone/.exec(ci);
    expect(loop?.[1]?.trim().split(/\s+/).map(Number)).toEqual(SUPPORTED.slice(1));
    expect(loop?.[2]).toContain('npm exec --yes --package="node@$major"');
    expect(loop?.[2]).toContain('node_modules/vitest/vitest.mjs run');
    expect(ci.indexOf('npm test')).toBeLessThan(ci.indexOf('for major in'));
  });

  it('should run, on Node 22 and 24, test files that all exist, the tests of a real Node-RED and of the package among them', async () => {
    const ci = await read('.ci/run');
    const list = /^NODE_VERSION_TESTS=\(\n([\s\S]*?)\n\)/m.exec(ci)?.[1]?.trim().split(/\s+/) ?? [];
    expect(list).toEqual(expect.arrayContaining(['test/packaging/', 'test/node-red/nodeRed.e2e.spec.ts', 'test/cli/cli.e2e.spec.ts']));
    for (const entry of list) expect(existsSync(path.join(root, entry)), entry).toBe(true);
    expect(/for major in [\d ]+; do\n[\s\S]*?"\$\{NODE_VERSION_TESTS\[@\]\}"\n/.test(ci)).toBe(true);
  });

  it('should run the Docker image on the newest of them in every stage', async () => {
    const stages = [...(await read('Dockerfile')).matchAll(/^FROM node:(\d+)-/gm)].map((match) => Number(match[1]));
    expect(stages.length).toBeGreaterThan(0);
    for (const major of stages) expect(major).toBe(SUPPORTED.at(-1));
  });
});
