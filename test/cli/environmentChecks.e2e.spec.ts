// What a flow needs from the environment, through `bin/redflow.js`: `validate` warns ENV_NOT_SET
// and exits 0; `run` without the model's key or the database's connection string stops at once
// with the code (exit 65), before a run is recorded and before any request to the model.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { assertBuilt, example, redflow, tempDirs } from './cliHarness.js';

const dirs = tempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

/** Nothing a model or database could be found from, except a model name (blank counts as unset). */
const BARE_ENV = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', REDFLOW_MODEL_BASE_URL: '', REDFLOW_MODEL: 'gpt-4o-mini', DATABASE_URL: '' };

describe('redflow validate and the environment', () => {
  it('should warn ENV_NOT_SET for the missing OpenAI key, naming the node and the variable, and exit 0', async ({ expect }) => {
    const result = await redflow(['validate', example('openai-agent')], { cwd: await dirs.make(), env: BARE_ENV });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^warning ENV_NOT_SET nodes\[2\]\.config: model\.llm 'model': .*\$OPENAI_API_KEY/m);
    expect(result.stdout).toContain('export OPENAI_API_KEY=');
    expect(result.stdout).toMatch(/openai-agent\/flow\.json: valid$/m);

    const withKey = await redflow(['validate', example('openai-agent'), '--json'], { cwd: await dirs.make(), env: { ...BARE_ENV, OPENAI_API_KEY: 'sk-test' } });
    expect(withKey.code, withKey.stderr).toBe(0);
    expect(JSON.parse(withKey.stdout)).toMatchObject({ ok: true, warnings: [] });
  });

  it('should warn ENV_NOT_SET for a tool.postgres without DATABASE_URL, and exit 0', async ({ expect }) => {
    const result = await redflow(['validate', example('postgres-orders'), '--json'], { cwd: await dirs.make(), env: BARE_ENV });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout) as { ok: boolean; warnings: { code: string; nodeId: string; message: string }[] };
    expect(parsed.ok).toBe(true);
    expect(parsed.warnings).toEqual([expect.objectContaining({ code: 'ENV_NOT_SET', nodeId: 'orders', message: expect.stringContaining('$DATABASE_URL') })]);
  });
});

describe('redflow run without what the flow needs', () => {
  it('should stop at once with MODEL_KEY_MISSING (exit 65) when OpenAI\'s key is not set, without trying the network', async ({ expect }) => {
    const cwd = await dirs.make();
    const started = performance.now();
    const result = await redflow(['run', example('openai-agent'), '--input', 'What is 2 + 2?'], { cwd, env: BARE_ENV });
    const elapsedMs = performance.now() - started;
    expect(result.code, result.stdout + result.stderr).toBe(65);
    expect(result.stderr).toMatch(/^error MODEL_KEY_MISSING: .*\$OPENAI_API_KEY is not set/m);
    expect(result.stderr).toMatch(/^hint: export OPENAI_API_KEY=/m);
    // Refused before the run starts: no run was recorded, so no request was made, let alone retried.
    expect(result.stderr).not.toContain('MODEL_UNAVAILABLE');
    expect(result.stderr).not.toContain('attempts');
    expect(existsSync(path.join(cwd, '.redflow', 'runs'))).toBe(false);
    // For the record (the proof is the absent log): a Node start, not four attempts with backoff.
    console.info(`redflow run without OPENAI_API_KEY ended in ${Math.round(elapsedMs)} ms`);
  });

  it('should stop at once with TOOL_CONFIG_INVALID (exit 65) when DATABASE_URL is not set, before the model is asked', async ({ expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['run', example('postgres-orders'), '--input', 'Where is order A-1001?'], { cwd, env: BARE_ENV });
    expect(result.code, result.stdout + result.stderr).toBe(65);
    expect(result.stderr).toMatch(/^error TOOL_CONFIG_INVALID: postgres tool 'order_lookup': no connection string: DATABASE_URL is not set/m);
    expect(result.stderr).toMatch(/^hint: set DATABASE_URL to a connection string/m);
    expect(existsSync(path.join(cwd, '.redflow', 'runs'))).toBe(false);
  });
});
