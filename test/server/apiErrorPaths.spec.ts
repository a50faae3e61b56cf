// Errors about flow files on the server's disk (edited by hand, or too large), when a run of them
// is asked for over the API: they name the flow by its id, never by its path on the server, and
// never quote the file.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer(dirs);
  await mkdir(t.flowsDir, { recursive: true });
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

describe('errors about flow files on disk, over the API', () => {
  it('should answer a run of a flow file that is not JSON with FLOW_INVALID_JSON naming the flow id only', async () => {
    await writeFile(path.join(t.flowsDir, 'broken.json'), '{ "nodes": [ SECRET-TEXT ] }');
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'broken', input: 'hi' } });
    expect(run.status).toBe(400);
    expect(run.error?.code).toBe('FLOW_INVALID_JSON');
    expect(run.text).toContain('broken');
    expect(run.text).not.toContain(t.root);
    expect(run.text).not.toContain('SECRET-TEXT');
  });

  it('should answer a run of a flow file over 5 MiB with FLOW_TOO_LARGE naming the flow id only', async () => {
    await writeFile(path.join(t.flowsDir, 'huge.json'), `{"nodes":[],"edges":[],"pad":"${'x'.repeat(5 * 1024 * 1024)}"}`);
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'huge', input: 'hi' } });
    expect(run.status).toBe(413);
    expect(run.error?.code).toBe('FLOW_TOO_LARGE');
    expect(run.text).toContain('huge');
    expect(run.text).not.toContain(t.root);
  });
});
