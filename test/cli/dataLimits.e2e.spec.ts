// `redflow run` with data past the answer limits (depth 64, 1,000,000 characters): an input is
// refused with exit 65 and a code before anything exists (no log); a conversation whose stored
// memory nests too deep is refused the same way. 10,000 nested arrays used to exit 70 with a
// RangeError and leave a 0-byte log.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { STACK_FRAME } from '../support/cli.js';
import { assertBuilt, copyExampleFlow, example, redflow, tempDirs } from './cliHarness.js';

const dirs = tempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe.concurrent('redflow run and the input limits', () => {
  it('should exit 65 with RUN_INPUT_TOO_DEEP for 10,000 nested arrays, and leave no log', async ({ expect }) => {
    const cwd = await dirs.make();
    await writeFile(path.join(cwd, 'deep.json'), nested(10_000));
    const result = await redflow(['run', example('order-status'), '--input-file', 'deep.json'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('error RUN_INPUT_TOO_DEEP');
    expect(result.stderr).toMatch(/hint: .*64 levels/);
    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.stdout).toBe('');
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

  it('should exit 65 with RUN_INPUT_TOO_LARGE for a text input over 1,000,000 characters, and leave no log', async ({ expect }) => {
    const cwd = await dirs.make();
    await writeFile(path.join(cwd, 'big.txt'), 'x'.repeat(1_000_001));
    const result = await redflow(['run', example('order-status'), '--input-file', 'big.txt', '--log', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('error RUN_INPUT_TOO_LARGE');
    expect(existsSync(path.join(cwd, 'run.jsonl'))).toBe(false);
  });

  it('should refuse a deep input before connecting to a cluster (exit 65, not 69)', async ({ expect }) => {
    const cwd = await dirs.make();
    await writeFile(path.join(cwd, 'deep.json'), nested(10_000));
    // Nothing listens on port 1: a command that tried to connect first would exit 69.
    const result = await redflow(['run', example('order-status'), '--input-file', 'deep.json', '--nats', '127.0.0.1:1'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('error RUN_INPUT_TOO_DEEP');
  });

  it("should exit 65 with MEMORY_RECORD_TOO_DEEP when the conversation's stored memory nests 10,000 deep", async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = await copyExampleFlow('order-status', cwd); // its memory.kv lives under cwd/.redflow/memory
    await mkdir(path.join(cwd, '.redflow', 'memory'), { recursive: true });
    await writeFile(path.join(cwd, '.redflow', 'memory', 'deep.json'), `{"turns":[],"notes":${nested(10_000)}}`);
    const result = await redflow(['run', flow, '--conversation', 'deep', '--input', 'hi'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('error MEMORY_RECORD_TOO_DEEP');
    expect(result.stderr).toContain('"deep"');
    expect(result.stderr).not.toMatch(STACK_FRAME);
  });
});
