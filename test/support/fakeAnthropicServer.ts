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

/** Token counts as the Messages API reports them. */
export interface AnthropicUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_creation_input_tokens?: number;
  readonly cache_read_input_tokens?: number;
}

/** What the Messages server can do besides the transport behaviours. */
export type AnthropicBehaviour =
  /**
   * A message: streamed as `message_start`, `content_block_start`, `ping`, `content_block_delta`s,
   * `content_block_stop`, `message_delta`, `message_stop` when the request says `stream: true`, one
   * JSON `message` otherwise. `toolUse` adds a `tool_use` block after the text.
   */
  | {
      readonly kind: 'message';
      readonly content: string;
      /** `null` leaves usage out of the events. */
      readonly usage?: AnthropicUsage | null;
      readonly stopReason?: string;
      readonly toolUse?: boolean;
      /** `tool_use` blocks after the text, each input streamed in `input_json_delta` pieces as the API does. */
      readonly toolUses?: readonly { readonly name: string; readonly input: unknown }[];
    }
  /**
   * An HTTP error with the API's error JSON (`{type: "error", error: {type, message}}`): 400
   * `invalid_request_error`, 401 `authentication_error`, 429 `rate_limit_error`, 529
   * `overloaded_error`, … `echoKey` puts the key the request carried into the message.
   */
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly type?: string;
      readonly message?: string;
      readonly retryAfter?: string;
      readonly echoKey?: boolean;
    }
  /** Streams `content`, then an `event: error` (e.g. `overloaded_error` mid-answer), then ends. */
  | { readonly kind: 'streamError'; readonly content?: string; readonly type: string; readonly message: string }
  /** Streams `content` and ends the response cleanly without `message_stop` (a cut stream). */
  | { readonly kind: 'cutStream'; readonly content: string };

/** What the fake Messages server does with the next request. */
export type FakeAnthropicBehaviour = AnthropicBehaviour | TransportBehaviour<AnthropicBehaviour>;

/** A running fake Messages server. */
export type FakeAnthropicServer = FakeModelServer<AnthropicBehaviour>;

const DEFAULT_USAGE: AnthropicUsage = { input_tokens: 25, output_tokens: 12 };

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function modelOf(body: unknown): string {
  const model = (body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : 'claude-fake';
}

/** The key a request carried, as the API reads it: `x-api-key`, or `Authorization: Bearer`. */
export function keyOf(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string') return apiKey;
  const authorization = headers.authorization;
  return typeof authorization === 'string' ? authorization.replace(/^Bearer\s+/i, '') : undefined;
}

const event = (type: string, data: unknown): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

interface StreamPlan {
  readonly content: string;
  readonly usage: AnthropicUsage | null;
  readonly stopReason?: string;
  readonly toolUse?: boolean;
  readonly toolUses?: readonly { readonly name: string; readonly input: unknown }[];
  /** An error event after the content, instead of the end. */
  readonly error?: { readonly type: string; readonly message: string };
  /** End after the content, with neither `message_delta` nor `message_stop`. */
  readonly cut?: boolean;
}

async function sendStream(exchange: Exchange, plan: StreamPlan): Promise<void> {
  const { res, body, gone } = exchange;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_fake_stream' });
  const id = `msg_fake_${Math.random().toString(36).slice(2, 10)}`;
  const startUsage = plan.usage === null ? undefined : { ...plan.usage, output_tokens: 1 };
  const events = [
    event('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: modelOf(body), content: [], stop_reason: null, stop_sequence: null, ...(startUsage && { usage: startUsage }) },
    }),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    event('ping', { type: 'ping' }),
    ...pieces(plan.content).map((text) => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
  ];
  if (plan.error !== undefined) {
    events.push(event('error', { type: 'error', error: plan.error }));
  } else if (plan.cut !== true) {
    events.push(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
    if (plan.toolUse === true) {
      events.push(
        event('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_fake', name: 'lookup', input: {} } }),
        event('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } }),
        event('content_block_stop', { type: 'content_block_stop', index: 1 }),
      );
    }
    plan.toolUses?.forEach((use, i) => {
      const index = i + 1;
      events.push(
        event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_fake_${index}`, name: use.name, input: {} } }),
        ...pieces(JSON.stringify(use.input)).map((partial_json) => event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } })),
        event('content_block_stop', { type: 'content_block_stop', index }),
      );
    });
    events.push(
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: plan.stopReason ?? (plan.toolUse === true || (plan.toolUses?.length ?? 0) > 0 ? 'tool_use' : 'end_turn'), stop_sequence: null },
        ...(plan.usage !== null && { usage: { output_tokens: plan.usage.output_tokens } }),
      }),
      event('message_stop', { type: 'message_stop' }),
    );
  }
  for (const text of events) if (!(await writeEvents(res, text, gone))) return;
  res.end();
}

const messagesProtocol: FakeProtocol<AnthropicBehaviour> = {
  path: '/v1/messages',
  root: '',
  async perform(behaviour, exchange) {
    const { req, res, body } = exchange;
    const wantsStream = (body as { stream?: unknown } | undefined)?.stream === true;
    switch (behaviour.kind) {
      case 'message': {
        const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
        if (wantsStream) {
          await sendStream(exchange, {
            content: behaviour.content,
            usage,
            ...(behaviour.stopReason !== undefined && { stopReason: behaviour.stopReason }),
            ...(behaviour.toolUse !== undefined && { toolUse: behaviour.toolUse }),
            ...(behaviour.toolUses !== undefined && { toolUses: behaviour.toolUses }),
          });
          return;
        }
        sendJson(res, 200, {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: modelOf(body),
          content: [{ type: 'text', text: behaviour.content }],
          stop_reason: behaviour.stopReason ?? 'end_turn',
          stop_sequence: null,
          ...(usage !== null && { usage }),
        });
        return;
      }
      case 'streamError':
        await sendStream(exchange, { content: behaviour.content ?? '', usage: DEFAULT_USAGE, error: { type: behaviour.type, message: behaviour.message } });
        return;
      case 'cutStream':
        await sendStream(exchange, { content: behaviour.content, usage: DEFAULT_USAGE, cut: true });
        return;
      case 'error': {
        const type = behaviour.type ?? ERROR_TYPES[behaviour.status] ?? (behaviour.status >= 500 ? 'api_error' : 'invalid_request_error');
        const said = behaviour.message ?? `fake ${type}`;
        const message = behaviour.echoKey === true ? `${said}: ${keyOf(req.headers) ?? '(no key)'}` : said;
        const headers: Record<string, string> = { 'request-id': 'req_fake_error' };
        if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
        sendJson(res, behaviour.status, { type: 'error', error: { type, message }, request_id: 'req_fake_error' }, headers);
        return;
      }
    }
  },
  notFound({ res }) {
    sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } });
  },
};

/**
 * Starts a local HTTP server (127.0.0.1, a free port) that speaks Anthropic's Messages wire
 * protocol on `POST /v1/messages` — streamed as named SSE events (`message_start` …
 * `message_stop`, with `ping`s and `error`s) or as one JSON message, as the request asks — records
 * every request and answers from a queue of {@link FakeAnthropicBehaviour}s. Its `baseUrl` is the
 * origin (the API root has no `/v1`).
 *
 * @example
 * ```ts
 * const server = await startFakeAnthropicServer();
 * server.enqueue({ kind: 'error', status: 529 }, { kind: 'message', content: '{}' });
 * ```
 */
export function startFakeAnthropicServer(): Promise<FakeAnthropicServer> {
  return startFakeModelServer(messagesProtocol, { kind: 'message', content: '{}' });
}

/** An origin where nothing listens (the port was just freed), for connection-refused tests. */
export function unusedAnthropicBaseUrl(): Promise<string> {
  return unusedLocalUrl('');
}
