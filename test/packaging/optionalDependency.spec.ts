import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { importOptional } from '../../src/optionalDependency.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-optional-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('importOptional', () => {
  it('should turn a missing package into DEPENDENCY_MISSING whose hint is the npm install that fixes it', async () => {
    const error = await importOptional('redflow-no-such-package', 'the feature', () => import('redflow-no-such-package' as string)).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RedflowError);
    expect(error).toMatchObject({
      code: ErrorCode.DEPENDENCY_MISSING,
      message: "the feature needs the package 'redflow-no-such-package', which is not installed",
      hint: expect.stringContaining('npm install redflow-no-such-package'),
    });
  });

  it('should pass on the error of a package that is there but cannot find one of its own dependencies', async () => {
    // The package loads, but what it imports is missing: installing it again would not help.
    const broken = path.join(dir, 'broken.mjs');
    await writeFile(broken, "import 'redflow-no-such-dependency';\n");
    const error = await importOptional('broken', 'the feature', () => import(pathToFileURL(broken).href)).catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(RedflowError);
    expect((error as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');
    expect(String(error)).toContain('redflow-no-such-dependency');
  });

  it('should not mistake a package whose name starts the same for the one asked for', async () => {
    const error = await importOptional('redflow-no', 'the feature', () => import('redflow-no-such-package' as string)).catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(RedflowError);
  });

  it('should give the module when it is there', async () => {
    const loaded = await importOptional('xstate', 'the feature', () => import('xstate'));
    expect(typeof loaded.createActor).toBe('function');
  });
});
