import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the fake server does with the next request. Queue them with {@link FakeChatServer.enqueue};
 * when the queue is empty the server uses its fallback (by default a completion answering `{}`).
 */
export type FakeBehaviour =
  /** A normal Chat Completion. `content: null` plus `toolCalls` mimics a tool-calling answer. */
  | {
      readonly kind: 'completion';
      readonly content: string | null;
      readonly toolCalls?: readonly unknown[];
      /** `null` leaves `usage` out of the body. */
      readonly usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
      readonly finishReason?: string;
    }
  /** An HTTP error with OpenAI's error JSON (or `body` verbatim) and an optional `Retry-After`. */
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message?: string;
      readonly type?: string;
      readonly retryAfter?: string;
      readonly body?: string;
    }
  /** Waits `ms`, then behaves as `then`; the wait ends early when the client goes away. */
  | { readonly kind: 'delay'; readonly ms: number; readonly then: FakeBehaviour }
  /** Never answers (until the client disconnects or the server stops). */
  | { readonly kind: 'hang' }
  /** Raw bytes. `chunked` leaves out Content-Length and sends the body in pieces. */
  | {
      readonly kind: 'raw';
      readonly body: string | Uint8Array;
      readonly status?: number;
      readonly contentType?: string;
      readonly chunked?: boolean;
    }
  /** A chunked body that never ends: `chunk` again and again until the client hangs up. */
  | { readonly kind: 'endless'; readonly chunk: string }
  /** Destroys the socket after reading the request, without any response. */
  | { readonly kind: 'destroy' }
  /** Answers as an SSE stream (`data:` chunks, then `data: [DONE]`), whatever the request asked. */
  | { readonly kind: 'stream'; readonly content: string };

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body, or `undefined` when it was not JSON. */
  readonly body: unknown;
  readonly rawBody: string;
}

/** A running fake server. */
export interface FakeChatServer {
  /** The API root to use as `baseUrl`, e.g. `http://127.0.0.1:43123/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Queues behaviours, one per coming request. */
  enqueue(...behaviours: FakeBehaviour[]): void;
  /** What to do when the queue is empty. */
  setFallback(behaviour: FakeBehaviour): void;
  /** Requests whose response was closed by the client before it ended (abort, timeout, cap). */
  readonly clientDisconnects: number;
  /** Forgets queued behaviours and recorded requests. */
  reset(): void;
  /** Stops listening and closes every connection. Idempotent. */
  stop(): Promise<void>;
}

const COMPLETIONS_PATH = '/v1/chat/completions';

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function completionBody(behaviour: Extract<FakeBehaviour, { kind: 'completion' }>, model: string): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: behaviour.content };
  if (behaviour.toolCalls !== undefined) message.tool_calls = behaviour.toolCalls;
  const body: Record<string, unknown> = {
    id: `chatcmpl-fake-${Math.random().toString(36).slice(2, 10)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: behaviour.finishReason ?? 'stop' }],
  };
  const usage = behaviour.usage === undefined ? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } : behaviour.usage;
  if (usage !== null) body.usage = usage;
  return body;
}

function sendStream(res: ServerResponse, content: string, model: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id: 'chatcmpl-fake-stream', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const pieces = content.match(/.{1,8}/gs) ?? [];
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] })}\n\n`);
  for (const piece of pieces) {
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
  }
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** Carries out one behaviour; resolves when the response is finished or abandoned. */
async function perform(
  behaviour: FakeBehaviour,
  req: IncomingMessage,
  res: ServerResponse,
  requestBody: unknown,
  gone: Promise<void>,
): Promise<void> {
  const model =
    typeof requestBody === 'object' && requestBody !== null && typeof (requestBody as { model?: unknown }).model === 'string'
      ? (requestBody as { model: string }).model
      : 'fake-model';
  const wantsStream = typeof requestBody === 'object' && requestBody !== null && (requestBody as { stream?: unknown }).stream === true;

  switch (behaviour.kind) {
    case 'completion':
      // A real server streams when asked to, which a stream:false client must never trigger.
      if (wantsStream && behaviour.content !== null) sendStream(res, behaviour.content, model);
      else sendJson(res, 200, completionBody(behaviour, model));
      return;
    case 'stream':
      sendStream(res, behaviour.content, model);
      return;
    case 'error': {
      const headers: Record<string, string> = {};
      if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
      if (behaviour.body !== undefined) {
        res.writeHead(behaviour.status, { 'content-type': 'application/json', ...headers });
        res.end(behaviour.body);
        return;
      }
      sendJson(
        res,
        behaviour.status,
        {
          error: {
            message: behaviour.message ?? `fake error ${behaviour.status}`,
            type: behaviour.type ?? (behaviour.status >= 500 ? 'server_error' : 'invalid_request_error'),
            param: null,
            code: null,
          },
        },
        headers,
      );
      return;
    }
    case 'delay': {
      let timer: NodeJS.Timeout | undefined;
      const elapsed = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), behaviour.ms);
      });
      const finished = await Promise.race([elapsed, gone.then(() => false)]);
      clearTimeout(timer);
      if (finished) await perform(behaviour.then, req, res, requestBody, gone);
      return;
    }
    case 'hang':
      await gone;
      return;
    case 'raw': {
      const bytes = typeof behaviour.body === 'string' ? Buffer.from(behaviour.body, 'utf8') : Buffer.from(behaviour.body);
      const headers: Record<string, string> = { 'content-type': behaviour.contentType ?? 'application/json' };
      if (behaviour.chunked !== true) headers['content-length'] = String(bytes.byteLength);
      res.writeHead(behaviour.status ?? 200, headers);
      if (behaviour.chunked === true) {
        for (let offset = 0; offset < bytes.byteLength; offset += 1024) res.write(bytes.subarray(offset, offset + 1024));
        res.end();
      } else {
        res.end(bytes);
      }
      return;
    }
    case 'endless': {
      res.writeHead(200, { 'content-type': 'application/json' });
      let open = true;
      void gone.then(() => {
        open = false;
      });
      while (open && !res.destroyed) {
        const ok = res.write(behaviour.chunk);
        if (!ok) {
          await Promise.race([new Promise<void>((resolve) => res.once('drain', () => resolve())), gone]);
        } else {
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      return;
    }
    case 'destroy':
      req.socket.destroy();
      return;
  }
}

/**
 * Starts a local HTTP server (127.0.0.1, a free port) that speaks the OpenAI Chat Completions wire
 * protocol on `POST /v1/chat/completions`, records every request and answers from a queue of
 * {@link FakeBehaviour}s. Any other path gets OpenAI's 404 error.
 *
 * @example
 * ```ts
 * let server: FakeChatServer;
 * beforeEach(async () => { server = await startFakeChatCompletionsServer(); });
 * afterEach(() => server.stop());
 * server.enqueue({ kind: 'error', status: 429, retryAfter: '1' }, { kind: 'completion', content: '{}' });
 * ```
 */
export async function startFakeChatCompletionsServer(): Promise<FakeChatServer> {
  const queue: FakeBehaviour[] = [];
  const requests: RecordedRequest[] = [];
  let fallback: FakeBehaviour = { kind: 'completion', content: '{}' };
  let clientDisconnects = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const path = req.url ?? '';
      requests.push({ method: req.method ?? '', path, headers: { ...req.headers }, body, rawBody });

      // Resolves when the client goes away before the response is complete.
      const gone = new Promise<void>((resolve) => {
        res.on('close', () => {
          if (!res.writableFinished) {
            clientDisconnects++;
          }
          resolve();
        });
      });

      if (req.method !== 'POST' || path !== COMPLETIONS_PATH) {
        sendJson(res, 404, {
          error: { message: `Unknown request URL: ${req.method ?? ''} ${path}`, type: 'invalid_request_error', param: null, code: 'unknown_url' },
        });
        return;
      }
      const behaviour = queue.shift() ?? fallback;
      perform(behaviour, req, res, body, gone).catch(() => {
        res.destroy();
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get clientDisconnects() {
      return clientDisconnects;
    },
    enqueue(...behaviours) {
      queue.push(...behaviours);
    },
    setFallback(behaviour) {
      fallback = behaviour;
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      clientDisconnects = 0;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/** Stops a server started by {@link startFakeChatCompletionsServer}; accepts `undefined` for convenience in `afterEach`. */
export async function stopFakeChatCompletionsServer(server: FakeChatServer | undefined): Promise<void> {
  await server?.stop();
}

/**
 * A `http://127.0.0.1:<port>/v1` URL where nothing listens (the port was just freed), for
 * connection-refused tests.
 */
export async function unusedLocalBaseUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}
