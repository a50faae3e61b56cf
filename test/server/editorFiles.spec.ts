// The editor's static files, served by `redflow serve` from its build directory.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
const INDEX = '<!doctype html><html><head><title>Redflow editor</title></head><body><div id="root"></div></body></html>';

beforeAll(async () => {
  t = await startTestServer(dirs);
  const put = async (relative: string, content: string) => {
    await mkdir(path.dirname(path.join(t.editorDir, relative)), { recursive: true });
    await writeFile(path.join(t.editorDir, relative), content);
  };
  await put('index.html', INDEX);
  await put('assets/index-abc123.js', 'console.log("editor")');
  await put('assets/index-abc123.css', 'body { margin: 0 }');
  await put('favicon.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await put('.env', 'SECRET=1');
  // A file beside the build that must never be served.
  await writeFile(path.join(t.root, 'secret.txt'), 'do not serve');
});
afterAll(async () => {
  await t.close();
  await dirs.cleanup();
});

describe('the editor files', () => {
  it('should serve index.html at / and each file with its content type', async () => {
    const index = await call(t.server, 'GET', '/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.text).toBe(INDEX);
    for (const [file, type] of [
      ['/assets/index-abc123.js', 'text/javascript; charset=utf-8'],
      ['/assets/index-abc123.css', 'text/css; charset=utf-8'],
      ['/favicon.svg', 'image/svg+xml'],
      ['/index.html', 'text/html; charset=utf-8'],
    ] as const) {
      const answer = await call(t.server, 'GET', file);
      expect(answer.status, file).toBe(200);
      expect(answer.headers['content-type'], file).toBe(type);
    }
    // Built assets have content hashes in their names: cached for good.
    expect((await call(t.server, 'GET', '/assets/index-abc123.js')).headers['cache-control']).toContain('immutable');
  });

  it('should answer the editor\'s own routes with index.html, but a missing asset with 404', async () => {
    for (const route of ['/flows/team/demo', '/runs', '/some/deep/route']) {
      const answer = await call(t.server, 'GET', route);
      expect(answer.status, route).toBe(200);
      expect(answer.text).toBe(INDEX);
    }
    expect((await call(t.server, 'GET', '/assets/missing-123.js')).status).toBe(404);
  });

  it('should answer HEAD with the headers only', async () => {
    const head = await call(t.server, 'HEAD', '/favicon.svg');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('41');
    expect(head.text).toBe('');
    expect((await call(t.server, 'POST', '/favicon.svg', { body: {} })).status).toBe(405);
  });

  it('should never serve a file outside the build, or a dot-file', async () => {
    for (const target of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt', '/.env', '/%2eenv', '/a%00b']) {
      const answer = await call(t.server, 'GET', target);
      expect(answer.status, target).toBe(404);
      expect(answer.text).not.toContain('do not serve');
      expect(answer.text).not.toContain('SECRET');
    }
  });
});

describe('without an editor build', () => {
  it('should answer 503 telling to run npm run build, as HTML for a browser and JSON otherwise', async () => {
    const bare = await startTestServer(dirs, { editorDir: path.join(t.root, 'no-such-dir') });
    try {
      const html = await call(bare.server, 'GET', '/', { headers: { accept: 'text/html,application/xhtml+xml' } });
      expect(html.status).toBe(503);
      expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(html.text).toContain('npm run build');
      const json = await call(bare.server, 'GET', '/flows/x');
      expect(json.status).toBe(503);
      expect(json.error).toMatchObject({ code: 'EDITOR_NOT_BUILT', hint: expect.stringContaining('npm run build') });
      // Neither says where the server's files are.
      expect(html.text + json.text).not.toContain(t.root);
      expect(json.error?.message).toContain('…/index.html');
      // The API works meanwhile.
      expect((await call(bare.server, 'GET', '/api/health')).status).toBe(200);
    } finally {
      await bare.close();
    }
  });
});
