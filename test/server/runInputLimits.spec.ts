// POST /api/runs with an input past the answer limits: a coded 400, and nothing left behind (no
// log, no run listed). 10,000 nested arrays used to answer 500 and leave an empty log.
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunListResponse } from '../../src/server/apiTypes.js';
import { answer, call, scriptedFlow, startTestServer, tempDirs, waitForRun, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer(dirs);
  await call(t.server, 'PUT', '/api/flows/plain', { body: scriptedFlow([answer.final('ok')]) });
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

async function expectNothingLeft(): Promise<void> {
  expect(existsSync(t.runsDir) ? await readdir(t.runsDir) : []).toEqual([]);
  expect(((await call(t.server, 'GET', '/api/runs')).json as RunListResponse).runs).toEqual([]);
}

describe('POST /api/runs and the input limits', () => {
  it('should refuse 10,000 nested arrays with 400 RUN_INPUT_TOO_DEEP and leave no log', async () => {
    // Sent as text: JSON.stringify cannot even write such a value.
    const refused = await call(t.server, 'POST', '/api/runs', {
      rawBody: `{"flow":"plain","input":${nested(10_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ code: 'RUN_INPUT_TOO_DEEP' });
    expect(refused.error?.hint).toContain('64');
    await expectNothingLeft();
  });

  it('should refuse an input one level past the limit, and run one at the limit', async () => {
    const refused = await call(t.server, 'POST', '/api/runs', { body: { flow: 'plain', input: JSON.parse(nested(65)) as unknown } });
    expect(refused.error?.code).toBe('RUN_INPUT_TOO_DEEP');
    await expectNothingLeft();
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'plain', input: JSON.parse(nested(64)) as unknown } });
    expect(started.status, started.text).toBe(201);
    await waitForRun(t.server, (started.json as { traceId: string }).traceId, (run) => run.status === 'finished');
  });

  it('should refuse an input over 1,000,000 characters of JSON with 400 RUN_INPUT_TOO_LARGE', async () => {
    await t.close();
    t = await startTestServer(dirs, { maxBodyBytes: 4 * 1024 * 1024 });
    await call(t.server, 'PUT', '/api/flows/plain', { body: scriptedFlow([answer.final('ok')]) });
    const refused = await call(t.server, 'POST', '/api/runs', { body: { flow: 'plain', input: { text: 'x'.repeat(1_000_001) } } });
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe('RUN_INPUT_TOO_LARGE');
    await expectNothingLeft();
  });
});
