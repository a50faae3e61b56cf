import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { ToolContext } from '../../src/actors/tool.js';
import { createHttpTool } from '../../src/actors/tools/httpTool.js';
import { runTool } from '../../src/runtime/serveActors.js';
import { validators } from '../../src/contracts/schemas.js';

interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A real HTTP server on 127.0.0.1 that records every request it receives. */
interface TestServer {
  readonly server: Server;
  readonly origin: string;
  readonly host: string;
  readonly seen: SeenRequest[];
}

async function startServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, seen };
}

async function stopServer(test: TestServer): Promise<void> {
  test.server.closeAllConnections();
  await new Promise<void>((resolve) => test.server.close(() => resolve()));
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

/** The main server's routes. */
function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url ?? '/', 'http://local');
  const path = url.pathname;
  if (path.startsWith('/echo')) {
    json(res, 200, { method: req.method, url: req.url, headers: req.headers, body });
  } else if (path === '/text') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('plain words');
  } else if (path === '/not-json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{oops');
  } else if (path === '/bad-utf8') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(Buffer.from([0x61, 0xff, 0x62]));
  } else if (path.startsWith('/status/')) {
    const status = Number(path.slice('/status/'.length));
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(`failure body for ${status} ${'x'.repeat(1000)}`);
  } else if (path === '/slow') {
    // Never answers; the connection is closed when the server stops.
  } else if (path === '/big') {
    const size = Number(url.searchParams.get('n'));
    const chunked = url.searchParams.get('chunked') === '1';
    res.writeHead(200, chunked ? { 'content-type': 'text/plain' } : { 'content-type': 'text/plain', 'content-length': size });
    if (chunked) {
      // Several writes without content-length: the cap must hold while streaming.
      const half = Math.floor(size / 2);
      res.write('a'.repeat(half));
      res.end('a'.repeat(size - half));
    } else {
      res.end('a'.repeat(size));
    }
  } else if (path === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' });
    res.end();
  } else if (path === '/loop') {
    res.writeHead(302, { location: '/loop' });
    res.end();
  } else {
    res.writeHead(404);
    res.end('no route');
  }
}

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, idempotencyKey: 'trace-1:1', traceId: 'trace-1', iteration: 1 };
}

/** What a call that must fail threw (`execute` is typed as possibly synchronous, hence `unknown`). */
async function callError(call: unknown): Promise<RedflowError> {
  const error: unknown = await Promise.resolve(call).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

describe('createHttpTool', () => {
  let main: TestServer;
  let other: TestServer;

  beforeAll(async () => {
    main = await startServer(route);
    other = await startServer((_req, res) => json(res, 200, { reached: 'other' }));
  });

  afterAll(async () => {
    await stopServer(main);
    await stopServer(other);
  });

  beforeEach(() => {
    main.seen.length = 0;
    other.seen.length = 0;
  });

  afterEach(() => {
    delete process.env.REDFLOW_HTTP_TOOL_TEST_TOKEN;
  });

  describe('definition', () => {
    it('should default the description and input schema', () => {
      const tool = createHttpTool({ name: 'orders', url: 'http://127.0.0.1:9/orders/{id}' });

      expect(tool.name).toBe('orders');
      expect(tool.description).toBe('GET http://127.0.0.1:9/orders/{id}');
      expect(tool.inputSchema).toEqual({ type: 'object' });
    });

    it('should keep a configured description and input schema', () => {
      const schema = { type: 'object', required: ['id'] };
      const tool = createHttpTool({ name: 'orders', method: 'POST', url: 'http://h/x', description: 'Order', inputSchema: schema });

      expect(tool.description).toBe('Order');
      expect(tool.inputSchema).toBe(schema);
    });

    it('should refuse a template whose host has a placeholder unless allowedHosts is set', () => {
      expect(() => createHttpTool({ name: 't', url: 'http://{host}/x' })).toThrow(
        expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID }),
      );
      expect(() => createHttpTool({ name: 't', url: 'http://{host}/x', allowedHosts: ['a.example'] })).not.toThrow();
    });

    it('should refuse schemes other than http and https', () => {
      expect(() => createHttpTool({ name: 't', url: 'file:///etc/passwd' })).toThrow(
        expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID }),
      );
      expect(() => createHttpTool({ name: 't', url: 'ftp://example.com/x' })).toThrow(
        expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID }),
      );
    });
  });

  describe('requests', () => {
    it('should expand and encode template fields and send the rest as query parameters for GET', async () => {
      const tool = createHttpTool({ name: 'orders', url: `${main.origin}/echo/orders/{id}` });

      const output = await tool.execute({ id: 'A/1 ?#&é', status: 'open', filter: { min: 2 }, tags: ['a', 'b'] }, context());

      expect(output).toMatchObject({ status: 200 });
      const echo = (output as { body: Echo }).body;
      expect(echo.method).toBe('GET');
      const sent = new URL(echo.url, 'http://x');
      expect(sent.pathname).toBe(`/echo/orders/${encodeURIComponent('A/1 ?#&é')}`);
      expect(sent.searchParams.get('status')).toBe('open');
      expect(sent.searchParams.get('filter')).toBe('{"min":2}');
      expect(sent.searchParams.get('tags')).toBe('["a","b"]');
      expect(sent.searchParams.has('id')).toBe(false);
      expect(echo.body).toBe('');
    });

    it('should send query parameters for DELETE too', async () => {
      const tool = createHttpTool({ name: 'del', method: 'DELETE', url: `${main.origin}/echo/{id}` });

      const { body } = (await tool.execute({ id: 7, force: true }, context())) as { body: Echo };

      expect(body.method).toBe('DELETE');
      expect(body.url).toBe('/echo/7?force=true');
    });

    it('should send the fields not used by the template as a JSON body for POST, PUT and PATCH', async () => {
      for (const method of ['POST', 'PUT', 'PATCH'] as const) {
        const tool = createHttpTool({ name: 'update', method, url: `${main.origin}/echo/orders/{id}` });

        const { body } = (await tool.execute({ id: 'A-1', note: 'hi', items: [1, 2] }, context())) as { body: Echo };

        expect(body.method).toBe(method);
        expect(body.url).toBe('/echo/orders/A-1');
        expect(JSON.parse(body.body)).toEqual({ note: 'hi', items: [1, 2] });
        expect(body.headers['content-type']).toBe('application/json');
      }
    });

    it('should fail with TOOL_INPUT_INVALID when a template field is missing, without a request', async () => {
      const tool = createHttpTool({ name: 'orders', url: `${main.origin}/echo/{id}` });

      const error = await callError(tool.execute({ other: 1 }, context()));

      expect(error.code).toBe(ErrorCode.TOOL_INPUT_INVALID);
      expect(error.message).toContain("'id'");
      expect(main.seen).toHaveLength(0);
    });

    it('should send configured headers with ${env:NAME} resolved at call time', async () => {
      const tool = createHttpTool({
        name: 'auth',
        url: `${main.origin}/echo`,
        headers: { authorization: 'Bearer ${env:REDFLOW_HTTP_TOOL_TEST_TOKEN}', 'x-static': 'plain' },
      });
      process.env.REDFLOW_HTTP_TOOL_TEST_TOKEN = 's3cret';

      const { body } = (await tool.execute({}, context())) as { body: Echo };

      expect(body.headers.authorization).toBe('Bearer s3cret');
      expect(body.headers['x-static']).toBe('plain');
    });

    it('should fail with TOOL_CONFIG_INVALID when a header names an unset env var, without a request', async () => {
      const tool = createHttpTool({
        name: 'auth',
        url: `${main.origin}/echo`,
        headers: { authorization: 'Bearer ${env:REDFLOW_HTTP_TOOL_TEST_TOKEN}' },
      });

      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_CONFIG_INVALID);
      expect(error.message).toContain('REDFLOW_HTTP_TOOL_TEST_TOKEN');
      expect(main.seen).toHaveLength(0);
    });

    it('should fail with TOOL_CONFIG_INVALID when a header value is not a valid header, without a request', async () => {
      const tool = createHttpTool({
        name: 'auth',
        url: `${main.origin}/echo`,
        headers: { 'x-token': '${env:REDFLOW_HTTP_TOOL_TEST_TOKEN}' },
      });
      process.env.REDFLOW_HTTP_TOOL_TEST_TOKEN = 'line\nbreak';

      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_CONFIG_INVALID);
      expect(error.message).not.toContain('line');
      expect(main.seen).toHaveLength(0);
    });
  });

  describe('hosts', () => {
    it('should refuse a host outside allowedHosts before any request reaches the server', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/echo`, allowedHosts: ['api.example.com'] });

      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_HOST_NOT_ALLOWED);
      expect(error.message).toContain(main.host);
      expect(error.hint).toContain('allowedHosts');
      expect(main.seen).toHaveLength(0);
    });

    it('should check the host after the template is expanded', async () => {
      const port = new URL(main.origin).port;
      const tool = createHttpTool({ name: 't', url: `http://{host}:${port}/echo`, allowedHosts: [main.host] });

      const error = await callError(tool.execute({ host: 'localhost' }, context()));
      expect(error.code).toBe(ErrorCode.TOOL_HOST_NOT_ALLOWED);
      expect(error.message).toContain(`localhost:${port}`);
      expect(main.seen).toHaveLength(0);

      await expect(tool.execute({ host: '127.0.0.1' }, context())).resolves.toMatchObject({ status: 200 });
      expect(main.seen).toHaveLength(1);
    });

    it('should not let a template value next to the host move the request to another host', async () => {
      const port = new URL(main.origin).port;
      // The default allowed host is the template's own: "127.0.0.1:<port>".
      const tool = createHttpTool({ name: 't', url: `http://127.0.0.1{suffix}:${port}/echo`, allowedHosts: [main.host] });

      const error = await callError(tool.execute({ suffix: '.nip.io' }, context()));

      expect(error.code).toBe(ErrorCode.TOOL_HOST_NOT_ALLOWED);
      expect(main.seen).toHaveLength(0);
    });

    it('should follow a redirect to an allowed host', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/redirect?to={to}` });

      const output = (await tool.execute({ to: '/echo/landed' }, context())) as { status: number; body: Echo };

      expect(output.status).toBe(200);
      expect(output.body.url).toBe('/echo/landed');
      expect(main.seen.map((r) => new URL(r.url, 'http://x').pathname)).toEqual(['/redirect', '/echo/landed']);
    });

    it('should refuse a redirect to a host that is not allowed, without contacting it', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/redirect?to={to}` });

      const error = await callError(tool.execute({ to: `${other.origin}/steal` }, context()));

      expect(error.code).toBe(ErrorCode.TOOL_HOST_NOT_ALLOWED);
      expect(error.message).toContain(other.host);
      expect(other.seen).toHaveLength(0);
    });

    it('should follow a redirect to another host when it is allowed, dropping credentials', async () => {
      const tool = createHttpTool({
        name: 't',
        url: `${main.origin}/redirect?to={to}`,
        allowedHosts: [main.host, other.host],
        headers: { authorization: 'Bearer token', 'x-keep': 'kept' },
      });

      const output = await tool.execute({ to: `${other.origin}/ok` }, context());

      expect(output).toMatchObject({ status: 200, body: { reached: 'other' } });
      expect(other.seen).toHaveLength(1);
      expect(other.seen[0]?.headers.authorization).toBeUndefined();
      expect(other.seen[0]?.headers['x-keep']).toBe('kept');
    });

    it('should refuse a redirect to a non-http scheme', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/redirect?to={to}` });

      const error = await callError(tool.execute({ to: 'file:///etc/passwd' }, context()));

      expect(error.code).toBe(ErrorCode.TOOL_HOST_NOT_ALLOWED);
    });

    it('should turn a POST into a GET without body on 303 and keep it on 307', async () => {
      const tool = createHttpTool({ name: 't', method: 'POST', url: `${main.origin}/redirect?to={to}&status={status}` });

      const after303 = (await tool.execute({ to: '/echo/a', status: 303, x: 1 }, context())) as { body: Echo };
      expect(after303.body.method).toBe('GET');
      expect(after303.body.body).toBe('');

      const after307 = (await tool.execute({ to: '/echo/b', status: 307, x: 1 }, context())) as { body: Echo };
      expect(after307.body.method).toBe('POST');
      expect(JSON.parse(after307.body.body)).toEqual({ x: 1 });
    });

    it('should stop after 5 redirects', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/loop` });

      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_FAILED);
      expect(error.message).toContain('redirects');
      expect(main.seen).toHaveLength(6);
    });
  });

  describe('limits', () => {
    it('should fail with TOOL_TIMEOUT when the server does not answer in time', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/slow`, timeoutMs: 100 });

      const started = Date.now();
      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_TIMEOUT);
      expect(error.retryable).toBe(true);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('should fail with RUN_ABORTED when the run signal aborts the request', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/slow`, timeoutMs: 10_000 });
      const run = new AbortController();
      setTimeout(() => run.abort(), 50);

      const error = await callError(tool.execute({}, context(run.signal)));

      expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    });

    it('should accept a body of exactly maxResponseBytes and refuse one byte more', async () => {
      for (const chunked of ['0', '1']) {
        const tool = createHttpTool({ name: 't', url: `${main.origin}/big?n={n}&chunked=${chunked}`, maxResponseBytes: 100 });

        await expect(tool.execute({ n: 100 }, context())).resolves.toMatchObject({ body: 'a'.repeat(100) });
        const error = await callError(tool.execute({ n: 101 }, context()));
        expect(error.code).toBe(ErrorCode.TOOL_RESPONSE_TOO_LARGE);
      }
    });

    it('should cap streamed bodies far beyond the limit', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/big?n=5000000&chunked=1`, maxResponseBytes: 1024 });

      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_RESPONSE_TOO_LARGE);
    });
  });

  describe('responses', () => {
    it('should parse JSON bodies and report the content type', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/echo` });

      const output = await tool.execute({}, context());

      expect(output).toMatchObject({ status: 200, contentType: 'application/json; charset=utf-8', body: { method: 'GET' } });
    });

    it('should return text bodies as text', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/text` });

      await expect(tool.execute({}, context())).resolves.toEqual({
        status: 200,
        contentType: 'text/plain; charset=utf-8',
        body: 'plain words',
      });
    });

    it('should return the text when a JSON content type carries invalid JSON', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/not-json` });

      await expect(tool.execute({}, context())).resolves.toMatchObject({ body: '{oops' });
    });

    it('should decode invalid UTF-8 with the replacement character', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/bad-utf8` });

      await expect(tool.execute({}, context())).resolves.toMatchObject({ body: 'a\uFFFDb' });
    });

    it('should fail with TOOL_HTTP_STATUS and a short excerpt for 4xx and 5xx', async () => {
      const tool = createHttpTool({ name: 't', url: `${main.origin}/status/{code}` });

      const notFound = await callError(tool.execute({ code: 404 }, context()));
      expect(notFound.code).toBe(ErrorCode.TOOL_HTTP_STATUS);
      expect(notFound.message).toContain('404');
      expect(notFound.message).toContain('failure body for 404');
      expect(notFound.message.length).toBeLessThan(400);
      expect(notFound.retryable).toBe(false);

      const serverError = await callError(tool.execute({ code: 503 }, context()));
      expect(serverError.code).toBe(ErrorCode.TOOL_HTTP_STATUS);
      expect(serverError.message).toContain('503');
      expect(serverError.retryable).toBe(true);
    });

    it('should fail with TOOL_FAILED when nothing listens', async () => {
      const closed = await startServer(() => undefined);
      await stopServer(closed);
      const tool = createHttpTool({ name: 't', url: `${closed.origin}/x` });

      const error = await callError(tool.execute({}, context()));

      expect(error.code).toBe(ErrorCode.TOOL_FAILED);
    });
  });

  describe('idempotency', () => {
    it('should send the call\'s idempotency key as Idempotency-Key, the same key when the call is re-sent', async () => {
      const get = createHttpTool({ name: 'lookup', url: `${main.origin}/echo` });
      const post = createHttpTool({ name: 'pay', method: 'POST', url: `${main.origin}/echo` });
      await get.execute({}, context());
      await post.execute({ amount: 5 }, { ...context(), idempotencyKey: 'trace-1:2', iteration: 2 });
      await post.execute({ amount: 5 }, { ...context(), idempotencyKey: 'trace-1:2', iteration: 2 });
      expect(main.seen.map((seen) => seen.headers['idempotency-key'])).toEqual(['trace-1:1', 'trace-1:2', 'trace-1:2']);
    });

    it('should keep the key on the request a redirect leads to', async () => {
      const tool = createHttpTool({ name: 'moved', method: 'POST', url: `${main.origin}/redirect?status=307&to=/echo` });
      await tool.execute({}, context());
      expect(main.seen.map((seen) => [seen.url, seen.headers['idempotency-key']])).toEqual([
        ['/redirect?status=307&to=/echo', 'trace-1:1'],
        ['/echo', 'trace-1:1'],
      ]);
    });

    it('should send the key under the header idempotencyHeader names, and none when it is false', async () => {
      await createHttpTool({ name: 'named', url: `${main.origin}/echo`, idempotencyHeader: 'X-Request-Id' }).execute({}, context());
      await createHttpTool({ name: 'off', url: `${main.origin}/echo`, idempotencyHeader: false }).execute({}, context());
      expect(main.seen[0]?.headers['x-request-id']).toBe('trace-1:1');
      expect(main.seen[0]?.headers['idempotency-key']).toBeUndefined();
      expect(Object.keys(main.seen[1]?.headers ?? {}).filter((name) => /idempotency|request-id/.test(name))).toEqual([]);
    });

    it('should refuse a headers entry that would replace the key, and a header name that is not one', () => {
      expect(() => createHttpTool({ name: 'clash', url: `${main.origin}/echo`, headers: { 'idempotency-key': 'fixed' } })).toThrow(
        expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID, path: '/headers/idempotency-key' }),
      );
      expect(() => createHttpTool({ name: 'bad', url: `${main.origin}/echo`, idempotencyHeader: 'not a header' })).toThrow(
        expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID, path: '/idempotencyHeader' }),
      );
    });

    it('should accept a header name or false in the node config schema, and nothing else', () => {
      const config = (idempotencyHeader: unknown) => validators.toolHttpConfig({ url: 'http://127.0.0.1/x', idempotencyHeader });
      expect([config('Idempotency-Key'), config('X-Request-Id'), config(false)]).toEqual([true, true, true]);
      expect([config(true), config('two words'), config('')]).toEqual([false, false, false]);
    });
  });

  describe('secrets', () => {
    it('should register a credential header resolved at call time, so its echo is redacted from the result', async () => {
      const tool = createHttpTool({ name: 'auth', url: `${main.origin}/echo`, headers: { authorization: 'Token ${env:REDFLOW_HTTP_TOOL_TEST_VALUE}' } });
      // Set only after the tool was made, under a name that does not look secret.
      process.env.REDFLOW_HTTP_TOOL_TEST_VALUE = 'call-time-credential-3e9a';
      try {
        const request = { traceId: 'trace-1', iteration: 1, tool: 'auth', input: {}, idempotencyKey: 'trace-1:1' };
        const result = await runTool(tool, request, new AbortController().signal);
        expect(main.seen[0]?.headers.authorization).toBe('Token call-time-credential-3e9a');
        expect(result).toMatchObject({ ok: true, output: { body: { headers: { authorization: '[redacted]' } } } });
        expect(JSON.stringify(result)).not.toContain('call-time-credential-3e9a');
      } finally {
        delete process.env.REDFLOW_HTTP_TOOL_TEST_VALUE;
      }
    });
  });

  it('should use the injected fetch', async () => {
    const calls: string[] = [];
    const fakeFetch: typeof fetch = (input) => {
      calls.push(String(input));
      return Promise.resolve(new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }));
    };
    const tool = createHttpTool({ name: 't', url: 'https://api.example.com/v1/{id}' }, { fetch: fakeFetch });

    await expect(tool.execute({ id: 'x' }, context())).resolves.toEqual({
      status: 200,
      contentType: 'application/json',
      body: { ok: true },
    });
    expect(calls).toEqual(['https://api.example.com/v1/x']);
  });
});
