import {
  pieces,
  sendJson,
  startFakeModelServer,
  unusedLocalUrl,
  writeEvents,
  type Exchange,
  type FakeModelServer,
  type FakeProtocol,
  type TransportBehaviour,
} from './fakeModelServer.js';

export type { RecordedRequest } from './fakeModelServer.js';

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

/** What the Chat Completions server can do besides the transport behaviours. */
export type ChatBehaviour =
  /**
   * A completion: streamed as `chat.completion.chunk` events then `data: [DONE]` when the request
   * says `stream: true` (with a usage chunk when it asks `stream_options.include_usage`), one JSON
   * body otherwise. `content: null` plus `toolCalls` mimics a tool-calling answer.
   */
  | {
      readonly kind: 'completion';
      readonly content: string | null;
      readonly toolCalls?: readonly unknown[];
      /** `null` leaves usage out. */
      readonly usage?: Usage | null;
      readonly finishReason?: string;
      /** Streamed: the wait between two pieces of the content, to watch an answer being written. */
      readonly pieceDelayMs?: number;
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
  /** Streams `content` as SSE whatever the request asked, `pieceDelayMs` between its pieces. */
  | { readonly kind: 'stream'; readonly content: string; readonly pieceDelayMs?: number }
  /** Streams `content`, then an `{"error": {...}}` event (how OpenAI reports a failure mid-stream), then ends. */
  | { readonly kind: 'streamError'; readonly content?: string; readonly message: string; readonly type?: string }
  /** Streams `content` and ends the response cleanly without a finish_reason or `[DONE]` (a cut stream). */
  | { readonly kind: 'cutStream'; readonly content: string };

/**
 * What the fake server does with the next request. Queue them with {@link FakeChatServer.enqueue};
 * when the queue is empty the server uses its fallback (by default a completion answering `{}`).
 */
export type FakeBehaviour = ChatBehaviour | TransportBehaviour<ChatBehaviour>;

/** A running fake Chat Completions server. */
export type FakeChatServer = FakeModelServer<ChatBehaviour>;

const DEFAULT_USAGE: Usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function modelOf(body: unknown): string {
  const model = (body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : 'fake-model';
}

function completionBody(behaviour: Extract<ChatBehaviour, { kind: 'completion' }>, model: string): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: behaviour.content };
  if (behaviour.toolCalls !== undefined) message.tool_calls = behaviour.toolCalls;
  const body: Record<string, unknown> = {
    id: `chatcmpl-fake-${Math.random().toString(36).slice(2, 10)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: behaviour.finishReason ?? 'stop' }],
  };
  const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
  if (usage !== null) body.usage = usage;
  return body;
}

interface StreamPlan {
  readonly content: string;
  readonly toolCalls?: readonly unknown[];
  /** Undefined: no finish chunk and no `[DONE]`. */
  readonly finishReason?: string;
  readonly usage?: Usage | null;
  /** An error event after the content, instead of the finish. */
  readonly error?: { readonly message: string; readonly type: string };
  /** The wait between two content pieces (none by default). */
  readonly pieceDelayMs?: number;
}

/** Streams as OpenAI does: a role delta, content deltas, a finish chunk, the usage chunk, `[DONE]`. */
async function sendStream(exchange: Exchange, plan: StreamPlan): Promise<void> {
  const { res, body, gone } = exchange;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const withUsage = (body as { stream_options?: { include_usage?: unknown } } | undefined)?.stream_options?.include_usage === true;
  const base = { id: 'chatcmpl-fake-stream', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: modelOf(body), system_fingerprint: 'fp_fake' };
  const chunk = (delta: unknown, finish: string | null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage && { usage: null }) })}\n\n`;
  const contentPieces = pieces(plan.content).map((piece) => chunk({ content: piece }, null));
  const events = [chunk({ role: 'assistant', content: '' }, null), ...contentPieces];
  // As OpenAI streams a call: its id and name first, then its arguments in pieces.
  plan.toolCalls?.forEach((call, index) => {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function;
    if (typeof fn?.arguments !== 'string') return void events.push(chunk({ tool_calls: [{ index, ...(call as object) }] }, null));
    events.push(chunk({ tool_calls: [{ index, ...(call as object), function: { ...fn, arguments: '' } }] }, null));
    for (const piece of pieces(fn.arguments)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
  });
  if (plan.error !== undefined) {
    events.push(`data: ${JSON.stringify({ error: { message: plan.error.message, type: plan.error.type, param: null, code: null } })}\n\n`);
  } else if (plan.finishReason !== undefined) {
    events.push(chunk({}, plan.finishReason));
    const usage = plan.usage === undefined ? DEFAULT_USAGE : plan.usage;
    if (withUsage && usage !== null) events.push(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    events.push('data: [DONE]\n\n');
  }
  for (const [index, event] of events.entries()) {
    if (!(await writeEvents(res, event, gone))) return;
    // Slowed between content pieces only, so the answer is seen being written.
    if (plan.pieceDelayMs !== undefined && index >= 1 && index < contentPieces.length) {
      const left = await Promise.race([new Promise<boolean>((resolve) => setTimeout(() => resolve(false), plan.pieceDelayMs)), gone.then(() => true)]);
      if (left) return;
    }
  }
  res.end();
}

const chatProtocol: FakeProtocol<ChatBehaviour> = {
  path: '/v1/chat/completions',
  root: '/v1',
  async perform(behaviour, exchange) {
    const { res, body } = exchange;
    const wantsStream = (body as { stream?: unknown } | undefined)?.stream === true;
    switch (behaviour.kind) {
      case 'completion':
        if (!wantsStream) {
          sendJson(res, 200, completionBody(behaviour, modelOf(body)));
          return;
        }
        await sendStream(exchange, {
          content: behaviour.content ?? '',
          ...(behaviour.toolCalls !== undefined && { toolCalls: behaviour.toolCalls }),
          finishReason: behaviour.finishReason ?? (behaviour.toolCalls !== undefined ? 'tool_calls' : 'stop'),
          ...(behaviour.usage !== undefined && { usage: behaviour.usage }),
          ...(behaviour.pieceDelayMs !== undefined && { pieceDelayMs: behaviour.pieceDelayMs }),
        });
        return;
      case 'stream':
        await sendStream(exchange, { content: behaviour.content, finishReason: 'stop', ...(behaviour.pieceDelayMs !== undefined && { pieceDelayMs: behaviour.pieceDelayMs }) });
        return;
      case 'streamError':
        await sendStream(exchange, { content: behaviour.content ?? '', error: { message: behaviour.message, type: behaviour.type ?? 'server_error' } });
        return;
      case 'cutStream':
        await sendStream(exchange, { content: behaviour.content });
        return;
      case 'error': {
        const headers: Record<string, string> = {};
        if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
        if (behaviour.body !== undefined) {
          res.writeHead(behaviour.status, { 'content-type': 'application/json', ...headers });
          res.end(behaviour.body);
          return;
        }
        const type = behaviour.type ?? (behaviour.status >= 500 ? 'server_error' : behaviour.status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error');
        sendJson(res, behaviour.status, { error: { message: behaviour.message ?? `fake error ${behaviour.status}`, type, param: null, code: null } }, headers);
        return;
      }
    }
  },
  notFound({ req, res }) {
    sendJson(res, 404, {
      error: { message: `Unknown request URL: ${req.method ?? ''} ${req.url ?? ''}`, type: 'invalid_request_error', param: null, code: 'unknown_url' },
    });
  },
};

/**
 * Starts a local HTTP server (127.0.0.1, a free port) that speaks the OpenAI Chat Completions wire
 * protocol on `POST /v1/chat/completions` — streamed (`data: {chat.completion.chunk}` events, a
 * usage chunk, `data: [DONE]`) or not, as the request asks — records every request and answers
 * from a queue of {@link FakeBehaviour}s. Any other path gets OpenAI's 404 error.
 *
 * @example
 * ```ts
 * let server: FakeChatServer;
 * beforeEach(async () => { server = await startFakeChatCompletionsServer(); });
 * afterEach(() => server.stop());
 * server.enqueue({ kind: 'error', status: 429, retryAfter: '1' }, { kind: 'completion', content: '{}' });
 * ```
 */
export function startFakeChatCompletionsServer(): Promise<FakeChatServer> {
  return startFakeModelServer(chatProtocol, { kind: 'completion', content: '{}' });
}

/** Stops a server started by {@link startFakeChatCompletionsServer}; accepts `undefined` for convenience in `afterEach`. */
export async function stopFakeChatCompletionsServer(server: FakeChatServer | undefined): Promise<void> {
  await server?.stop();
}

/** A `http://127.0.0.1:<port>/v1` URL where nothing listens (the port was just freed), for connection-refused tests. */
export function unusedLocalBaseUrl(): Promise<string> {
  return unusedLocalUrl('/v1');
}
