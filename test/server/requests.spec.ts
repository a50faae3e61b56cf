// How `redflow serve` answers requests in general: routes, methods, request bodies, error bodies.
import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { validators } from '../../src/contracts/schemas.js';
import { ApiRoute, type AbortRunRequest, type HealthResponse, type StartRunRequest } from '../../src/server/apiTypes.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import type { RunBackend } from '../../src/server/runBackend.js';
import { STACK_FRAME } from '../support/cli.js';
import { call, startTestServer, tempDirs, type Answer, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

async function withServer(run: (t: TestServer) => Promise<void>, options: Parameters<typeof startTestServer>[1] = {}): Promise<void> {
  const t = await startTestServer(dirs, options);
  try {
    await run(t);
  } finally {
    await t.close();
  }
}

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.error?.code).toBe(code);
  expect(typeof answer.error?.message).toBe('string');
  expect(answer.text).not.toMatch(STACK_FRAME);
}

describe('routes and methods', () => {
  it('should answer GET /api/health with the version and mode', async () => {
    await withServer(async (t) => {
      const health = await call(t.server, 'GET', ApiRoute.health);
      expect(health.status).toBe(200);
      expect(health.json).toEqual({ ok: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/), mode: 'embedded', inspect: false } satisfies HealthResponse);
      expect(health.headers['cache-control']).toBe('no-store');
      expect(health.headers['x-content-type-options']).toBe('nosniff');
    });
  });

  it('should say inspect: true when the server has an inspector', async () => {
    await withServer(
      async (t) => {
        expect(((await call(t.server, 'GET', ApiRoute.health)).json as HealthResponse).inspect).toBe(true);
      },
      { inspector: () => undefined },
    );
  });

  it('should answer 404 HTTP_NOT_FOUND for an unknown API route and 405 with Allow for a wrong method', async () => {
    await withServer(async (t) => {
      expectError(await call(t.server, 'GET', '/api/nothing'), 404, 'HTTP_NOT_FOUND');
      expectError(await call(t.server, 'GET', '/api'), 404, 'HTTP_NOT_FOUND');
      expectError(await call(t.server, 'GET', '/api/runs/x/y'), 404, 'HTTP_NOT_FOUND');
      const wrong = await call(t.server, 'DELETE', '/api/runs');
      expectError(wrong, 405, 'HTTP_METHOD_NOT_ALLOWED');
      expect(wrong.headers.allow).toBe('GET, POST');
      expect((await call(t.server, 'POST', '/api/health')).headers.allow).toBe('GET');
      expectError(await call(t.server, 'PATCH', '/api/flows/x', { body: {} }), 405, 'HTTP_METHOD_NOT_ALLOWED');
    });
  });
});

describe('request bodies', () => {
  it('should refuse a body that is not JSON with 400 and where the mistake is', async () => {
    await withServer(async (t) => {
      const answer = await call(t.server, 'POST', '/api/runs', { rawBody: '{ "flow": "x",\n  "input": }', headers: { 'content-type': 'application/json' } });
      expectError(answer, 400, 'HTTP_BODY_NOT_JSON');
      expect(answer.error?.message).toContain('line 2, column');
      const notUtf8 = await call(t.server, 'POST', '/api/validate', { rawBody: Buffer.from([0x7b, 0xff, 0x7d]), headers: { 'content-type': 'application/json' } });
      expectError(notUtf8, 400, 'HTTP_BODY_NOT_JSON');
    });
  });

  it('should refuse a body without a JSON content type with 415', async () => {
    await withServer(async (t) => {
      expectError(await call(t.server, 'POST', '/api/validate', { rawBody: '{}', headers: { 'content-type': 'text/plain' } }), 415, 'HTTP_UNSUPPORTED_MEDIA_TYPE');
      expectError(await call(t.server, 'PUT', '/api/flows/x', { rawBody: '{}' }), 415, 'HTTP_UNSUPPORTED_MEDIA_TYPE');
      // Parameters and case do not matter.
      const fine = await call(t.server, 'POST', '/api/validate', { rawBody: '{}', headers: { 'content-type': 'Application/JSON; charset=utf-8' } });
      expect(fine.status).toBe(200);
    });
  });

  it('should refuse a missing body with 400', async () => {
    await withServer(async (t) => {
      expectError(await call(t.server, 'POST', '/api/runs'), 400, 'HTTP_BODY_NOT_JSON');
    });
  });

  it('should refuse a body over the limit with 413, declared or streamed', async () => {
    await withServer(async (t) => {
      const big = JSON.stringify({ flow: 'x', input: 'y'.repeat(1024 * 1024) });
      expectError(await call(t.server, 'POST', '/api/runs', { rawBody: big, headers: { 'content-type': 'application/json' } }), 413, 'HTTP_BODY_TOO_LARGE');
      const chunked = await new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: t.server.port, method: 'POST', path: '/api/runs', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              const json = JSON.parse(text) as { error: Answer['error'] };
              resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, error: json.error });
            });
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 20; i++) req.write('x'.repeat(100 * 1024));
        req.end();
      });
      expectError(chunked, 413, 'HTTP_BODY_TOO_LARGE');
      // The server is still fine.
      expect((await call(t.server, 'GET', ApiRoute.health)).status).toBe(200);
    });
  });

  it('should refuse a body that does not match its schema with 400 HTTP_BODY_INVALID', async () => {
    await withServer(async (t) => {
      for (const body of [{ input: 'x' }, { flow: 'x' }, { flow: 1, input: 'x' }, { flow: 'x', input: 'y', extra: true }, { flow: 'x', input: 'y', timeoutMs: -1 }, [], 'x']) {
        const answer = await call(t.server, 'POST', '/api/runs', { body });
        expectError(answer, 400, 'HTTP_BODY_INVALID');
        expect(answer.error?.message).toContain('start-run-request.schema.json');
      }
      const abort = await call(t.server, 'POST', '/api/runs/abc/abort', { body: { reason: 5 } });
      expectError(abort, 400, 'HTTP_BODY_INVALID');
    });
  });
});

describe('the request schemas', () => {
  it('should accept every field of the TypeScript request types', () => {
    const start: StartRunRequest = { flow: 'team/demo', input: { any: ['json'] }, conversationId: 'c-1', timeoutMs: 5000 };
    const abort: AbortRunRequest = { reason: 'no longer needed' };
    expect(validators.startRunRequest(start), JSON.stringify(validators.startRunRequest.errors)).toBe(true);
    expect(validators.startRunRequest({ flow: 'x', input: null })).toBe(true);
    expect(validators.abortRunRequest(abort)).toBe(true);
    expect(validators.abortRunRequest({})).toBe(true);
  });
});

describe('unexpected failures', () => {
  it('should answer 500 without the details, and log them on the server only', async () => {
    const logged: string[] = [];
    const real = createEmbeddedRunBackend({ flowsDir: '.' });
    const failing: RunBackend = {
      ...real,
      list: () => Promise.reject(new Error('database password is hunter2 at /srv/secret')),
    };
    await withServer(
      async (t) => {
        const answer = await call(t.server, 'GET', '/api/runs');
        expectError(answer, 500, 'HTTP_INTERNAL_ERROR');
        expect(answer.text).not.toContain('hunter2');
        expect(logged.join('\n')).toContain('hunter2');
      },
      { backend: failing, logError: (line) => logged.push(line) },
    );
  });
});

describe('request log', () => {
  it('should log method, path and status without the query (which may hold the token)', async () => {
    const lines: string[] = [];
    await withServer(
      async (t) => {
        await call(t.server, 'GET', '/api/runs/nope/stream?token=sekret-token-123');
        await call(t.server, 'GET', '/api/health');
      },
      { logRequest: (line) => lines.push(line), token: 'sekret-token-123' },
    );
    expect(lines[0]).toMatch(/^GET \/api\/runs\/nope\/stream 404 [\d.]+ ms$/);
    expect(lines[1]).toMatch(/^GET \/api\/health 401 /);
    expect(lines.join('\n')).not.toContain('sekret');
  });
});
