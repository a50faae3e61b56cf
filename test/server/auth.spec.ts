// Who may use `redflow serve`: the bearer token, the loopback default, and the Host check.
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RedflowError } from '../../src/errors.js';
import { isLoopbackHost, tokensEqual } from '../../src/server/auth.js';
import { createRedflowServer } from '../../src/server/server.js';
import { answer, call, openSse, scriptedFlow, startTestServer, tempDirs } from './serverHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const TOKEN = 'a-long-random-token-0123456789';

describe('the bearer token', () => {
  it('should refuse API requests without the token, or with a wrong one, and take the right one', async () => {
    const t = await startTestServer(dirs, { token: TOKEN });
    try {
      const missing = await call(t.server, 'GET', '/api/health');
      expect(missing.status).toBe(401);
      expect(missing.error?.code).toBe('HTTP_UNAUTHORIZED');
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="redflow"');
      for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, 'Bearer ']) {
        const wrong = await call(t.server, 'GET', '/api/health', { headers: { authorization } });
        expect(wrong.status, authorization).toBe(401);
      }
      const right = await call(t.server, 'GET', '/api/flows', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(right.status).toBe(200);
      // Checked before routing: an unknown route without the token says nothing about the API.
      expect((await call(t.server, 'GET', '/api/secret-route')).status).toBe(401);
      // ?token= is for the stream only.
      expect((await call(t.server, 'GET', `/api/flows?token=${TOKEN}`)).status).toBe(401);
    } finally {
      await t.close();
    }
  });

  it('should take ?token= on the SSE stream, which EventSource cannot give headers to', async () => {
    const t = await startTestServer(dirs, { token: TOKEN });
    const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
    try {
      await call(t.server, 'PUT', '/api/flows/quick', { ...auth, body: scriptedFlow([answer.final('ok')]) });
      const started = await call(t.server, 'POST', '/api/runs', { ...auth, body: { flow: 'quick', input: 'x' } });
      const { traceId } = started.json as { traceId: string };
      await expect(openSse(t.server, `/api/runs/${traceId}/stream`)).rejects.toMatchObject({ status: 401 });
      await expect(openSse(t.server, `/api/runs/${traceId}/stream?token=wrong`)).rejects.toMatchObject({ status: 401 });
      const reader = await openSse(t.server, `/api/runs/${traceId}/stream?token=${encodeURIComponent(TOKEN)}`);
      await reader.waitFor((f) => f.event === 'end');
    } finally {
      await t.close();
    }
  });

  it('should serve the editor\'s files without a token', async () => {
    const t = await startTestServer(dirs, { token: TOKEN });
    try {
      await mkdir(t.editorDir, { recursive: true });
      await writeFile(path.join(t.editorDir, 'index.html'), '<!doctype html><title>editor</title>');
      const page = await call(t.server, 'GET', '/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('editor');
    } finally {
      await t.close();
    }
  });

  it('should compare tokens exactly', () => {
    expect(tokensEqual(TOKEN, TOKEN)).toBe(true);
    expect(tokensEqual(`${TOKEN} `, TOKEN)).toBe(false);
    expect(tokensEqual('', TOKEN)).toBe(false);
  });
});

describe('where the server listens', () => {
  it('should refuse to listen on a non-loopback address without a token', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10']) {
      const refused = createRedflowServer({ host, port: 0, flowsDir: await dirs.make() });
      await expect(refused).rejects.toBeInstanceOf(RedflowError);
      await expect(refused).rejects.toMatchObject({ code: 'SERVE_TOKEN_REQUIRED', hint: expect.stringContaining('--token') });
    }
  });

  it('should listen on 0.0.0.0 with a token, and print a URL that works', async () => {
    const t = await startTestServer(dirs, { host: '0.0.0.0', token: TOKEN });
    try {
      expect(t.server.url).toBe(`http://127.0.0.1:${t.server.port}/`);
      expect((await call(t.server, 'GET', '/api/health', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('should tell loopback addresses from the others', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '::ffff:10.0.0.1', 'localhost.example.com']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('should refuse, without a token, requests addressed to a name that is not local (DNS rebinding)', async () => {
    const t = await startTestServer(dirs);
    try {
      const rebound = await call(t.server, 'GET', '/api/flows', { headers: { host: `evil.example:${t.server.port}` } });
      expect(rebound.status).toBe(403);
      expect(rebound.error?.code).toBe('HTTP_HOST_NOT_ALLOWED');
      for (const host of [`localhost:${t.server.port}`, `127.0.0.1:${t.server.port}`, `[::1]:${t.server.port}`]) {
        expect((await call(t.server, 'GET', '/api/flows', { headers: { host } })).status, host).toBe(200);
      }
    } finally {
      await t.close();
    }
  });
});
