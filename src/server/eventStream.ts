import type { ServerResponse } from 'node:http';
import { redactSecrets } from '../secrets/secrets.js';

/** How often a comment is sent on an idle stream, so proxies and browsers keep it open: 15 s. */
export const DEFAULT_KEEPALIVE_MS = 15_000;

/** How long a browser waits before reconnecting a dropped stream, sent as `retry:`. */
const RECONNECT_MS = 1000;

/**
 * Each event object's JSON (with the secrets the server knows redacted), made once however many
 * streams send it: the followers of one run all get the same (never mutated) event objects, and
 * serialising per follower dominated a run followed by many clients.
 */
const jsonOfEvent = new WeakMap<object, string>();

function json(data: unknown): string {
  if (typeof data !== 'object' || data === null) return redactSecrets(JSON.stringify(data));
  let text = jsonOfEvent.get(data);
  if (text === undefined) {
    text = redactSecrets(JSON.stringify(data));
    jsonOfEvent.set(data, text);
  }
  return text;
}

/** A `text/event-stream` answer, open until {@link EventStream.end} or the client leaves. */
export interface EventStream {
  /** Sends one event; `id` becomes the client's `Last-Event-ID` when it reconnects. */
  send(event: string, data: unknown, id?: number): void;
  /** Sends a last event (without an id, so a reconnect still resumes after the last real one) and closes. */
  end(event: string, data: unknown): void;
  /** Closes without a last event (the client reconnects, and learns then what happened). */
  close(): void;
  /** True once ended or the client has gone. */
  readonly closed: boolean;
  /** Called once when the stream closes, whichever side closed it. */
  onClose(listener: () => void): void;
}

/**
 * Answers `res` as a server-sent event stream: its status and headers, sent at once (every SSE
 * endpoint of the server starts this way).
 *
 * @example
 * ```ts
 * startEventStream(res);
 * res.write('data: {"type":"RUN_STARTED"}\n\n');
 * ```
 */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // nginx buffers answers by default, which would hold events back until the run ends.
    'X-Accel-Buffering': 'no',
  });
  res.socket?.setNoDelay(true);
}

/**
 * Starts a Server-Sent Events answer: the headers (no caching, no proxy buffering), the
 * reconnection delay, and a keepalive comment on idle streams. Data is JSON, which never holds a
 * raw line break, so each event is exactly one `data:` line.
 *
 * @example
 * ```ts
 * const stream = openEventStream(res);
 * stream.send('agent-event', event, event.seq);
 * stream.end('end', { status: 'finished' });
 * ```
 */
export function openEventStream(res: ServerResponse, options: { readonly keepAliveMs?: number } = {}): EventStream {
  startEventStream(res);
  res.write(`retry: ${RECONNECT_MS}\n\n`);
  let closed = false;
  const listeners: (() => void)[] = [];
  const keepAlive = setInterval(() => write(': keepalive\n\n'), options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    for (const listener of listeners.splice(0)) listener();
  };
  // 'close' on the response fires when it has ended or when the connection dropped first.
  res.once('close', close);
  function write(text: string): void {
    if (!closed && !res.writableEnded && !res.destroyed) res.write(text);
  }
  return {
    send(event, data, id) {
      write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${json(data)}\n\n`);
    },
    end(event, data) {
      write(`event: ${event}\ndata: ${redactSecrets(JSON.stringify(data))}\n\n`);
      if (!res.writableEnded) res.end();
      close();
    },
    close() {
      if (!res.writableEnded) res.end();
      close();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}
