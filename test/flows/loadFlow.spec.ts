import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { Severity, flowDiagnostic } from '../../src/flows/diagnostics.js';
import { MAX_FLOW_FILE_BYTES, formatDiagnostics, loadFlowFile, parseFlowText } from '../../src/flows/loadFlow.js';
import { errorsOf, fixturePath, validFlow } from './flowFixtures.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'redflow-flows-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<RedflowError> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(RedflowError);
  return thrown as RedflowError;
}

describe('loadFlowFile', () => {
  it('should load and validate the graph format example with its absolute path and folder', async () => {
    const loaded = await loadFlowFile(fixturePath('graph-format-example.json'));
    expect(loaded.path).toBe(fixturePath('graph-format-example.json'));
    expect(loaded.baseDir).toBe(dirname(fixturePath('graph-format-example.json')));
    expect(loaded.validation.ok).toBe(true);
    expect(loaded.validation.warnings.map((w) => w.code)).toEqual([ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA]);
  });

  it('should resolve a relative path against the working directory', async () => {
    const loaded = await loadFlowFile(relative(process.cwd(), fixturePath('graph-format-example.json')));
    expect(loaded.path).toBe(fixturePath('graph-format-example.json'));
  });

  it('should report a file that is not JSON with FLOW_INVALID_JSON and its line and column', async () => {
    const loaded = await loadFlowFile(fixturePath('not-json.json'));
    const [error, ...rest] = errorsOf(loaded.validation);
    expect(rest).toEqual([]);
    expect(error?.code).toBe(ErrorCode.FLOW_INVALID_JSON);
    expect(error?.message).toContain('line 4, column 5');
    expect(error?.message).toContain(fixturePath('not-json.json'));
    expect(error?.hint).toContain('line 4, column 5');
  });

  it('should throw FLOW_NOT_FOUND with a hint for a missing file', async () => {
    const error = await rejection(loadFlowFile(join(dir, 'missing.json')));
    expect(error.code).toBe(ErrorCode.FLOW_NOT_FOUND);
    expect(error.message).toContain(join(dir, 'missing.json'));
    expect(error.hint).toBeTruthy();
  });

  it('should throw FLOW_NOT_FOUND for a folder', async () => {
    const error = await rejection(loadFlowFile(dir));
    expect(error.code).toBe(ErrorCode.FLOW_NOT_FOUND);
    expect(error.message).toContain('not a file');
  });

  it('should refuse a file over 5 MiB with FLOW_TOO_LARGE', async () => {
    const big = join(dir, 'big.json');
    await writeFile(big, `{"nodes": [], "edges": [], "description": "${'x'.repeat(MAX_FLOW_FILE_BYTES)}"}`);
    const error = await rejection(loadFlowFile(big));
    expect(error.code).toBe(ErrorCode.FLOW_TOO_LARGE);
    expect(error.message).toContain('5 MiB');
  });

  it('should accept a file of exactly 5 MiB', async () => {
    const file = join(dir, 'limit.json');
    const text = JSON.stringify(validFlow());
    await writeFile(file, text + ' '.repeat(MAX_FLOW_FILE_BYTES - Buffer.byteLength(text)));
    expect((await loadFlowFile(file)).validation.ok).toBe(true);
  });

  it('should accept a UTF-8 byte order mark', async () => {
    const file = join(dir, 'bom.json');
    await writeFile(file, `\uFEFF${JSON.stringify(validFlow())}`);
    expect((await loadFlowFile(file)).validation.ok).toBe(true);
  });

  it('should report bytes that are not UTF-8 as FLOW_INVALID_JSON', async () => {
    const file = join(dir, 'latin1.json');
    await writeFile(file, Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]));
    const [error] = errorsOf((await loadFlowFile(file)).validation);
    expect(error?.code).toBe(ErrorCode.FLOW_INVALID_JSON);
    expect(error?.message).toContain('UTF-8');
  });
});

describe('parseFlowText', () => {
  it('should name the source and give line and column of a syntax error', () => {
    const [error] = errorsOf(parseFlowText('{\n  "nodes": [],\n  "edges": [],\n}', 'editor'));
    expect(error?.code).toBe(ErrorCode.FLOW_INVALID_JSON);
    expect(error?.message).toMatch(/^editor is not valid JSON at line 4, column 1: a trailing comma/);
  });

  it('should report an empty text', () => {
    const [error] = errorsOf(parseFlowText('', 'flow.json'));
    expect(error?.message).toContain('line 1, column 1');
  });

  it('should validate parsed JSON', () => {
    expect(parseFlowText(JSON.stringify(validFlow()), 'flow.json').ok).toBe(true);
    const [error] = errorsOf(parseFlowText('[]', 'flow.json'));
    expect(error?.code).toBe(ErrorCode.FLOW_SCHEMA_MISMATCH);
  });
});

describe('formatDiagnostics', () => {
  it('should print one line per diagnostic: severity, code, path, message and hint', () => {
    const text = formatDiagnostics([
      flowDiagnostic(Severity.Error, ErrorCode.NO_MODEL, "agent.core 'agent' has no model connected", {
        path: 'nodes[1]',
        hint: 'add a model.llm node',
        nodeId: 'agent',
      }),
      flowDiagnostic(Severity.Warning, ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA, 'no schema'),
    ]);
    expect(text).toBe(
      "error NO_MODEL nodes[1]: agent.core 'agent' has no model connected (add a model.llm node)\nwarning TOOL_WITHOUT_INPUT_SCHEMA flow: no schema",
    );
  });

  it('should print nothing for no diagnostics', () => {
    expect(formatDiagnostics([])).toBe('');
  });
});
