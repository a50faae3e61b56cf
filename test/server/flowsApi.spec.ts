// The flows endpoints of `redflow serve`: list, read, save, delete, validate, and the strict flow ids.
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FlowListResponse, FlowSavedResponse, ValidationResponse } from '../../src/server/apiTypes.js';
import { answer, call, scriptedFlow, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer(dirs);
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

const flow = (name = 'demo') => scriptedFlow([answer.final('hello')], { name });

describe('saving and reading flows', () => {
  it('should create the flows directory on the first save and write pretty JSON atomically', async () => {
    const saved = await call(t.server, 'PUT', '/api/flows/team/support/demo', { body: flow() });
    expect(saved.status).toBe(201);
    expect(saved.headers.location).toBe('/api/flows/team/support/demo');
    const body = saved.json as FlowSavedResponse;
    expect(body).toMatchObject({ id: 'team/support/demo', validation: { ok: true, errors: [], warnings: [] } });
    expect(Number.isNaN(Date.parse(body.updatedAt))).toBe(false);

    const file = path.join(t.flowsDir, 'team', 'support', 'demo.json');
    // Written with the path it is saved under as its id, first.
    expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify({ id: 'team/support/demo', ...flow() }, null, 2)}\n`);
    // No temporary file left beside it.
    expect(await readdir(path.dirname(file))).toEqual(['demo.json']);

    const again = await call(t.server, 'PUT', '/api/flows/team/support/demo', { body: flow('renamed') });
    expect(again.status).toBe(200);
    const read = await call(t.server, 'GET', '/api/flows/team/support/demo');
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toMatch(/^application\/json/);
    expect(read.json).toEqual({ id: 'team/support/demo', ...flow('renamed') });
  });

  it('should save a flow with graph errors and return them, but refuse a body that is not a flow', async () => {
    const broken = { ...flow(), edges: [] };
    const saved = await call(t.server, 'PUT', '/api/flows/broken', { body: broken });
    expect(saved.status).toBe(201);
    const validation = (saved.json as FlowSavedResponse).validation;
    expect(validation.ok).toBe(false);
    expect(validation.errors.map((e) => e.code)).toContain('CAPABILITY_NOT_CONNECTED');

    for (const notAFlow of [[1, 2], { nodes: 'x', edges: [] }, { nodes: [{ id: 'a' }], edges: [] }, 'flow']) {
      const refused = await call(t.server, 'PUT', '/api/flows/not-a-flow', { body: notAFlow });
      expect(refused.status, JSON.stringify(notAFlow)).toBe(400);
      expect(refused.error?.code).toBe('HTTP_BODY_INVALID');
      expect((refused.json as { diagnostics: { code: string }[] }).diagnostics[0]?.code).toBe('FLOW_SCHEMA_MISMATCH');
    }
    expect((await call(t.server, 'GET', '/api/flows/not-a-flow')).status).toBe(404);
  });

  it("should refuse to save a flow whose MCP server is a program to start (MCP_COMMAND_NOT_ALLOWED, 403, nothing written), and save one that connects over HTTP", async () => {
    const withMcp = (config: Record<string, unknown>) => {
      const base = flow();
      return {
        ...base,
        nodes: [...base.nodes, { id: 'files', type: 'tool.mcp', config }],
        edges: [...base.edges, { id: 'e-files', source: 'agent', target: 'files', kind: 'tool' }],
      };
    };
    const refused = await call(t.server, 'PUT', '/api/flows/runs-a-program', { body: withMcp({ command: 'sh', args: ['-c', 'touch /tmp/owned'] }) });
    expect(refused.status).toBe(403);
    expect(refused.error).toMatchObject({ code: 'MCP_COMMAND_NOT_ALLOWED', path: 'nodes[4].config.command' });
    expect(refused.error?.hint).toContain('--allow-mcp-commands');
    expect(await readdir(t.flowsDir).catch(() => [])).toEqual([]);
    // Over HTTP the server starts nothing: saved as any flow.
    expect((await call(t.server, 'PUT', '/api/flows/over-http', { body: withMcp({ url: 'http://127.0.0.1:9/mcp' }) })).status).toBe(201);

    // A server started to allow it saves the program's flow.
    const allowing = await startTestServer(dirs, { allowMcpCommands: true });
    try {
      expect((await call(allowing.server, 'PUT', '/api/flows/runs-a-program', { body: withMcp({ command: 'node', args: ['server.mjs'] }) })).status).toBe(201);
    } finally {
      await allowing.close();
    }
  });

  it('should delete a flow, then answer 404 for it', async () => {
    await call(t.server, 'PUT', '/api/flows/gone', { body: flow() });
    const deleted = await call(t.server, 'DELETE', '/api/flows/gone');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call(t.server, 'GET', '/api/flows/gone')).error?.code).toBe('FLOW_NOT_FOUND');
    expect((await call(t.server, 'DELETE', '/api/flows/gone')).status).toBe(404);
  });

  it('should answer 404 FLOW_NOT_FOUND for an unknown flow', async () => {
    const answer404 = await call(t.server, 'GET', '/api/flows/nothing/here');
    expect(answer404.status).toBe(404);
    expect(answer404.error).toMatchObject({ code: 'FLOW_NOT_FOUND', message: expect.stringContaining('nothing/here') });
  });

  it('should refuse a flow larger than 5 MiB with 413', async () => {
    const huge = { ...flow(), description: 'x'.repeat(5 * 1024 * 1024) };
    const refused = await call(t.server, 'PUT', '/api/flows/huge', { body: huge });
    expect(refused.status).toBe(413);
    expect(refused.error?.code).toBe('HTTP_BODY_TOO_LARGE');
    // Under the body limit, but over the limit once written pretty-printed.
    const padded = { ...flow(), nodes: [...flow().nodes, ...Array.from({ length: 100_000 }, (_, i) => ({ id: `n${i}`, type: 'response.end' }))] };
    const tooLargeOnDisk = await call(t.server, 'PUT', '/api/flows/padded', { body: padded });
    expect(tooLargeOnDisk.status).toBe(413);
    expect(tooLargeOnDisk.error?.code).toBe('FLOW_TOO_LARGE');
  });
});

describe('flow ids', () => {
  const invalid = [
    '/api/flows/../x',
    '/api/flows/a/../../x',
    '/api/flows/%2e%2e/x',
    '/api/flows/%2E%2E%2Fx',
    '/api/flows/.hidden',
    '/api/flows/a//b',
    '/api/flows/a/',
    '/api/flows/a%5Cb',
    '/api/flows/a%00b',
    '/api/flows/sp%20ace',
    '/api/flows/bad%zz',
    '/api/flows/trailing.',
    '/api/flows/one/two/three/four/five',
  ];

  it('should refuse path traversal and every other invalid id with 400 FLOW_ID_INVALID, for every method', async () => {
    for (const target of invalid) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const answered = await call(t.server, method, target, method === 'PUT' ? { body: flow() } : {});
        expect(answered.status, `${method} ${target}`).toBe(400);
        expect(answered.error?.code, `${method} ${target}`).toBe('FLOW_ID_INVALID');
      }
    }
    // Nothing was written anywhere.
    expect(await readdir(t.root)).toEqual([]);
  });

  it('should refuse an invalid flow id in a run request and in a runs filter', async () => {
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: '../x', input: 'hi' } });
    expect(started.status).toBe(400);
    expect(started.error?.code).toBe('FLOW_ID_INVALID');
    const listed = await call(t.server, 'GET', '/api/runs?flow=..%2Fx');
    expect(listed.error?.code).toBe('FLOW_ID_INVALID');
  });

  it('should refuse an id that leads outside the directory through a symbolic link', async () => {
    const outside = await dirs.make('redflow-outside-');
    await writeFile(path.join(outside, 'secret.json'), JSON.stringify(flow()));
    await mkdir(t.flowsDir, { recursive: true });
    await symlink(outside, path.join(t.flowsDir, 'link'));
    const read = await call(t.server, 'GET', '/api/flows/link/secret');
    expect(read.status).toBe(400);
    expect(read.error?.code).toBe('FLOW_ID_INVALID');
    const write = await call(t.server, 'PUT', '/api/flows/link/planted', { body: flow() });
    expect(write.status).toBe(400);
    expect(await readdir(outside)).toEqual(['secret.json']);
    // Nor is the link followed when listing.
    expect((await call(t.server, 'GET', '/api/flows')).json).toEqual({ flows: [] });
  });
});

describe('listing flows', () => {
  it('should list flows by id with name, description, updatedAt and validity, skipping what is not a flow', async () => {
    const put = (id: string, body: unknown) => call(t.server, 'PUT', `/api/flows/${id}`, { body });
    await put('b/valid', { ...flow('Valid one'), description: 'it works' });
    await put('a/invalid', { ...flow('Broken'), edges: [] });
    await put('one/two/three/deep', flow('deep'));
    const write = async (relative: string, text: string) => {
      await mkdir(path.dirname(path.join(t.flowsDir, relative)), { recursive: true });
      await writeFile(path.join(t.flowsDir, relative), text);
    };
    await write('b/answers.json', JSON.stringify([{ action: 'final' }]));
    await write('data.json', JSON.stringify({ rows: [] }));
    await write('notes.txt', 'not json');
    await write('syntax-error.json', '{ "nodes": [ }');
    await write('.hidden/flow.json', JSON.stringify(flow()));
    await write('node_modules/pkg/flow.json', JSON.stringify(flow()));
    await write('one/two/three/four/too-deep.json', JSON.stringify(flow()));

    const listed = await call(t.server, 'GET', '/api/flows');
    expect(listed.status).toBe(200);
    const { flows } = listed.json as FlowListResponse;
    expect(flows.map((f) => [f.id, f.valid])).toEqual([
      ['a/invalid', false],
      ['b/valid', true],
      ['one/two/three/deep', true],
      ['syntax-error', false],
    ]);
    expect(flows[1]).toMatchObject({ name: 'Valid one', description: 'it works' });
    expect(Number.isNaN(Date.parse(flows[1]?.updatedAt ?? ''))).toBe(false);

    // A file with a syntax error is listed so it can be found, and reading it says where the mistake is.
    const broken = await call(t.server, 'GET', '/api/flows/syntax-error');
    expect(broken.status).toBe(422);
    expect(broken.error).toMatchObject({ code: 'FLOW_INVALID_JSON', message: expect.stringContaining('line 1, column') });
    // A JSON file that is not a flow is not one through the API either.
    expect((await call(t.server, 'GET', '/api/flows/b/answers')).status).toBe(404);
  });

  it('should list nothing when the flows directory does not exist yet', async () => {
    expect((await call(t.server, 'GET', '/api/flows')).json).toEqual({ flows: [] });
  });
});

describe('POST /api/validate', () => {
  it('should validate a flow and return its errors and warnings', async () => {
    const ok = await call(t.server, 'POST', '/api/validate', { body: flow() });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ ok: true, errors: [], warnings: [] });

    const bad = await call(t.server, 'POST', '/api/validate', { body: { ...flow(), nodes: flow().nodes.filter((n) => n.id !== 'model') } });
    expect(bad.status).toBe(200);
    const result = bad.json as ValidationResponse;
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => e.code)).toContain('NO_MODEL');

    const notObject = (await call(t.server, 'POST', '/api/validate', { body: [1] })).json as ValidationResponse;
    expect(notObject.errors[0]?.code).toBe('FLOW_SCHEMA_MISMATCH');
  });
});
