import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { ToolContext } from '../../src/actors/tool.js';
import { loadModuleTool } from '../../src/actors/tools/moduleTool.js';

const fixtures = fileURLToPath(new URL('../fixtures/tools/', import.meta.url));

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, idempotencyKey: 'trace-1:1', traceId: 'trace-1', iteration: 1 };
}

async function loadError(module: string, extra: { export?: string } = {}): Promise<RedflowError> {
  const error: unknown = await loadModuleTool({ module, ...extra }, fixtures).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

describe('loadModuleTool', () => {
  it('should load a TypeScript tool through tsx and run it', async () => {
    const tool = await loadModuleTool({ module: './valid-tool.ts' }, fixtures);

    expect(tool.name).toBe('add');
    expect(tool.description).toBe('Adds two numbers');
    expect(tool.inputSchema).toMatchObject({ required: ['a', 'b'] });
    await expect(tool.execute({ a: 2, b: 3 }, context())).resolves.toEqual({ sum: 5, traceId: 'trace-1' });
  });

  it('should load a named export of a .mjs module instead of its default export', async () => {
    const tool = await loadModuleTool({ module: 'named-tool.mjs', export: 'lookup' }, fixtures);

    expect(tool.name).toBe('lookup');
    await expect(tool.execute({ id: 'A-1' }, context())).resolves.toEqual({ id: 'A-1', status: 'shipped' });
  });

  it('should use the module namespace when there is no default export', async () => {
    const tool = await loadModuleTool({ module: 'namespace-tool.mjs' }, fixtures);

    expect(tool.name).toBe('echo');
    await expect(tool.execute({ x: 1 }, context())).resolves.toEqual({ echoed: { x: 1 } });
  });

  it('should let the config override the name and description', async () => {
    const tool = await loadModuleTool(
      { module: 'valid-tool.ts', name: 'sum_numbers', description: 'Sums a and b' },
      fixtures,
    );

    expect(tool.name).toBe('sum_numbers');
    expect(tool.description).toBe('Sums a and b');
  });

  it('should keep a tool\'s idempotent declaration, and leave it out for a tool that makes none', async () => {
    const lookup = await loadModuleTool({ module: 'idempotent-tools.mjs', export: 'lookup' }, fixtures);
    const named = await loadModuleTool({ module: 'named-tool.mjs', export: 'lookup' }, fixtures);

    expect(lookup.idempotent).toBe(true);
    expect(named.idempotent).toBeUndefined();
  });

  it('should report an idempotent declaration that is not true or false', async () => {
    const error = await loadError('idempotent-tools.mjs', { export: 'misdeclared' });

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('idempotent must be true or false when given, got a string "yes"');
  });

  it('should report a missing file with its path', async () => {
    const error = await loadError('no-such-tool.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('no-such-tool.mjs');
    expect(error.path).toContain('no-such-tool.mjs');
  });

  it('should report a missing execute, naming the file and showing the expected shape', async () => {
    const error = await loadError('missing-execute.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('missing-execute.mjs');
    expect(error.message).toContain('execute must be a function');
    expect(error.hint).toContain('export default');
    expect(error.hint).toContain('execute');
  });

  it('should report a name the model cannot use', async () => {
    const error = await loadError('bad-name.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('bad-name.mjs');
    expect(error.message).toContain('"not a valid name!"');
  });

  it('should accept a bad module name when the config replaces it with a valid one', async () => {
    const tool = await loadModuleTool({ module: 'bad-name.mjs', name: 'renamed' }, fixtures);

    expect(tool.name).toBe('renamed');
  });

  it('should report an inputSchema that does not compile', async () => {
    const error = await loadError('bad-schema.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('bad-schema.mjs');
    expect(error.message).toContain('inputSchema is not a valid JSON Schema');
  });

  it('should report a module that throws while loading, with the cause', async () => {
    const error = await loadError('throws-on-import.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('throws-on-import.mjs');
    expect(error.message).toContain('fixture exploded while loading');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('should name files by the flow\'s reference, never by their absolute paths, in a load failure', async () => {
    const error = await loadError('./imports-missing.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('"./imports-missing.mjs"');
    expect(error.message).toContain('no-such-dependency.mjs');
    expect(JSON.stringify(error.toInfo())).not.toContain(fixtures.replace(/\/$/, ''));
  });

  it.each([
    ['a path leading out of the folder', '../server/gate.mjs'],
    ['a file: URL', () => pathToFileURL(fileURLToPath(new URL('../fixtures/tools/valid-tool.ts', import.meta.url))).href],
    ['a data: URL', 'data:text/javascript,export default 1'],
  ])('should refuse %s with FLOW_FILE_OUTSIDE_ROOTS before importing it', async (_name, module) => {
    const error = await loadError(typeof module === 'string' ? module : module());

    expect(error.code).toBe(ErrorCode.FLOW_FILE_OUTSIDE_ROOTS);
  });

  it('should load a module from a folder given in allowFiles', async () => {
    const tool = await loadModuleTool({ module: '../server/gate.mjs' }, fixtures, [fileURLToPath(new URL('../fixtures/server/', import.meta.url))]);

    expect(tool.name).toBe('gate');
  });

  it('should report a named export that does not exist, listing the exports', async () => {
    const error = await loadError('named-tool.mjs', { export: 'nope' });

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain("no export named 'nope'");
    expect(error.message).toContain('lookup');
    expect(error.hint).toContain('export const nope =');
  });

  it('should report a default export that is not an object', async () => {
    // named-tool.mjs's default export is a string.
    const error = await loadError('named-tool.mjs');

    expect(error.code).toBe(ErrorCode.TOOL_MODULE_INVALID);
    expect(error.message).toContain('must be an object');
  });

  it('should fail with TOOL_TIMEOUT and abort the signal it gave execute when the timeout passes', async () => {
    const tool = await loadModuleTool({ module: 'slow-tool.mjs', timeoutMs: 50 }, fixtures);
    let abortReason: unknown;

    const started = Date.now();
    await expect(
      tool.execute({ onAbort: (reason: unknown) => (abortReason = reason) }, context()),
    ).rejects.toMatchObject({ code: ErrorCode.TOOL_TIMEOUT, retryable: true });

    expect(Date.now() - started).toBeLessThan(5_000);
    expect(abortReason).toMatchObject({ code: ErrorCode.TOOL_TIMEOUT });
  });

  it('should fail with RUN_ABORTED and abort the tool when the run signal aborts', async () => {
    const tool = await loadModuleTool({ module: 'slow-tool.mjs', timeoutMs: 10_000 }, fixtures);
    const run = new AbortController();
    let aborted = false;

    const call = tool.execute({ onAbort: () => (aborted = true) }, context(run.signal));
    setTimeout(() => run.abort(), 20);

    await expect(call).rejects.toMatchObject({ code: ErrorCode.RUN_ABORTED });
    expect(aborted).toBe(true);
  });

  it('should pass errors thrown by execute through unchanged', async () => {
    const tool = await loadModuleTool({ module: 'failing-tool.mjs' }, fixtures);

    await expect(tool.execute({}, context())).rejects.toMatchObject({
      message: 'backend said no',
      code: 'BACKEND_REFUSED',
    });
  });

  it('should refuse a call when the run is already aborted, without running the tool', async () => {
    const tool = await loadModuleTool({ module: 'slow-tool.mjs' }, fixtures);
    let started = false;

    await expect(
      tool.execute({ onAbort: () => (started = true) }, context(AbortSignal.abort())),
    ).rejects.toMatchObject({ code: ErrorCode.RUN_ABORTED });
    expect(started).toBe(false);
  });
});
