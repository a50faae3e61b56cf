// A flow's id is the path it is saved under, whatever the client sent: saving as
// `newcomer/first` writes `"id": "newcomer/first"`, so no file runs under another flow's name.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answer, call, scriptedFlow, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer(dirs);
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

const onDisk = async (id: string) => JSON.parse(await readFile(path.join(t.flowsDir, `${id}.json`), 'utf8')) as { id?: string; name?: string };

describe('the id of a saved flow', () => {
  it('should write the path it is saved under as the id, replacing the id the body gave', async () => {
    const saved = await call(t.server, 'PUT', '/api/flows/newcomer/first', { body: { ...scriptedFlow([answer.final('hi')]), id: 'my-flow', name: 'First' } });
    expect(saved.status).toBe(201);
    expect(await onDisk('newcomer/first')).toMatchObject({ id: 'newcomer/first', name: 'First' });
    const read = await call(t.server, 'GET', '/api/flows/newcomer/first');
    expect((read.json as { id?: string }).id).toBe('newcomer/first');
  });

  it('should write the id of a body that gave none', async () => {
    const { id: _none, ...body } = { ...scriptedFlow([answer.final('hi')]), id: undefined };
    await call(t.server, 'PUT', '/api/flows/plain', { body });
    expect((await onDisk('plain')).id).toBe('plain');
  });
});
