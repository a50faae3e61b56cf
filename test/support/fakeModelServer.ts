import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What any fake model server can do with a request, whatever protocol it speaks. Protocol servers
 * (`fakeChatCompletionsServer.ts`, `fakeAnthropicServer.ts`) add their own behaviours.
 */
export type TransportBehaviour<B> =
  /** Waits `ms`, then behaves as `then`; the wait ends early when the client goes away. */
  | { readonly kind: 'delay'; readonly ms: number; readonly then: B }
  /** Never answers (until the client disconnects or the server stops). */
  | { readonly kind: 'hang' }
  /** Raw bytes. `chunked` leaves out Content-Length and sends the body in pieces. */
  | {
      readonly kind: 'raw';
      readonly body: string | Uint8Array;
      readonly status?: number;
      readonly contentType?: string;
      readonly chunked?: boolean;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** A chunked body that never ends: `chunk` again and again until the client hangs up. */
  | { readonly kind: 'endless'; readonly chunk: string; readonly contentType?: string }
  /** Destroys the socket after reading the request, without any response. */
  | { readonly kind: 'destroy' };

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body, or `undefined` when it was not JSON. */
  readonly body: unknown;
  readonly rawBody: string;
}

/** What a protocol's handler is given for one request. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The parsed JSON body of the request (undefined when not JSON). */
  readonly body: unknown;
  /** Resolves when the client goes away before the response is complete. */
  readonly gone: Promise<void>;
}

/** The protocol part of a fake server: its path, its own behaviours, its 404. */
export interface FakeProtocol<B> {
  /** The one path served (e.g. `/v1/chat/completions`); anything else gets {@link FakeProtocol.notFound}. */
  readonly path: string;
  /** The API root clients are given, relative to the origin (e.g. `/v1`, or `` for Anthropic). */
  readonly root: string;
  /** Carries out a protocol behaviour (the generic ones are handled before). */
  perform(behaviour: B, exchange: Exchange): Promise<void> | void;
  notFound(exchange: Exchange): void;
}

/** A running fake model server. */
export interface FakeModelServer<B> {
  /** The API root to use as `baseUrl`, e.g. `http://127.0.0.1:43123/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Queues behaviours, one per coming request. */
  enqueue(...behaviours: (B | TransportBehaviour<B>)[]): void;
  /** What to do when the queue is empty. */
  setFallback(behaviour: B | TransportBehaviour<B>): void;
  /**
   * Decides from each request what to do when the queue is empty (before the fallback, which
   * `undefined` falls to): answers that depend on the conversation, whatever order requests come in.
   */
  respondWith(decide: ((request: RecordedRequest) => B | TransportBehaviour<B> | undefined) | undefined): void;
  /** Requests whose response was closed by the client before it ended (abort, timeout, cap). */
  readonly clientDisconnects: number;
  /** Forgets queued behaviours and recorded requests. */
  reset(): void;
  /** Stops listening and closes every connection. Idempotent. */
  stop(): Promise<void>;
}

/** Writes a JSON response with its Content-Length. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/**
 * Splits text into pieces as a model streams tokens: 8 characters each, or bigger for a long text
 * so that it comes in at most 256 events (tests of huge answers stay fast).
 */
export function pieces(text: string): string[] {
  const size = Math.max(8, Math.ceil(text.length / 256));
  const out: string[] = [];
  for (let start = 0; start < text.length; start += size) out.push(text.slice(start, start + size));
  return out;
}

/** Writes (SSE text, bytes), waiting for the socket when its buffer is full; false when the client is gone. */
export async function writeEvents(res: ServerResponse, data: string | Uint8Array, gone: Promise<void>): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(data)) return true;
  let left = false;
  await Promise.race([new Promise<void>((resolve) => res.once('drain', () => resolve())), gone.then(() => (left = true))]);
  return !left && !res.destroyed;
}

const TRANSPORT_KINDS = new Set(['delay', 'hang', 'raw', 'endless', 'destroy']);

function isTransport<B>(behaviour: B | TransportBehaviour<B>): behaviour is TransportBehaviour<B> {
  return TRANSPORT_KINDS.has((behaviour as { kind: string }).kind);
}

async function perform<B>(behaviour: B | TransportBehaviour<B>, exchange: Exchange, protocol: FakeProtocol<B>): Promise<void> {
  if (!isTransport(behaviour)) {
    await protocol.perform(behaviour, exchange);
    return;
  }
  const { req, res, gone } = exchange;
  switch (behaviour.kind) {
    case 'delay': {
      let timer: NodeJS.Timeout | undefined;
      const elapsed = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), behaviour.ms);
      });
      const finished = await Promise.race([elapsed, gone.then(() => false)]);
      clearTimeout(timer);
      if (finished) await perform(behaviour.then, exchange, protocol);
      return;
    }
    case 'hang':
      await gone;
      return;
    case 'raw': {
      const bytes = typeof behaviour.body === 'string' ? Buffer.from(behaviour.body, 'utf8') : Buffer.from(behaviour.body);
      const headers: Record<string, string> = { 'content-type': behaviour.contentType ?? 'application/json', ...behaviour.headers };
      if (behaviour.chunked !== true) headers['content-length'] = String(bytes.byteLength);
      res.writeHead(behaviour.status ?? 200, headers);
      if (behaviour.chunked === true) {
        for (let offset = 0; offset < bytes.byteLength; offset += 1024) {
          if (!(await writeEvents(res, bytes.subarray(offset, offset + 1024), gone))) return;
        }
        res.end();
      } else {
        res.end(bytes);
      }
      return;
    }
    case 'endless': {
      res.writeHead(200, { 'content-type': behaviour.contentType ?? 'application/json' });
      let open = true;
      void gone.then(() => {
        open = false;
      });
      while (open && !res.destroyed) {
        if (!(await writeEvents(res, behaviour.chunk, gone))) return;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return;
    }
    case 'destroy':
      req.socket.destroy();
      return;
  }
}

/**
 * Starts a local HTTP server (127.0.0.1, a free port) speaking `protocol` on its one path: it
 * records every request and answers from a queue of behaviours (the protocol's own, or the
 * transport ones of {@link TransportBehaviour}), falling back to `fallback` when the queue is empty.
 */
export async function startFakeModelServer<B>(protocol: FakeProtocol<B>, fallback: B): Promise<FakeModelServer<B>> {
  const queue: (B | TransportBehaviour<B>)[] = [];
  const requests: RecordedRequest[] = [];
  let current: B | TransportBehaviour<B> = fallback;
  let decide: ((request: RecordedRequest) => B | TransportBehaviour<B> | undefined) | undefined;
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
      const recorded: RecordedRequest = { method: req.method ?? '', path, headers: { ...req.headers }, body, rawBody };
      requests.push(recorded);
      const gone = new Promise<void>((resolve) => {
        res.on('close', () => {
          if (!res.writableFinished) clientDisconnects++;
          resolve();
        });
      });
      const exchange: Exchange = { req, res, body, gone };
      if (req.method !== 'POST' || path.split('?')[0] !== protocol.path) {
        protocol.notFound(exchange);
        return;
      }
      const behaviour = queue.shift() ?? decide?.(recorded) ?? current;
      perform(behaviour, exchange, protocol).catch(() => {
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
    baseUrl: `http://127.0.0.1:${port}${protocol.root}`,
    port,
    requests,
    get clientDisconnects() {
      return clientDisconnects;
    },
    enqueue(...behaviours) {
      queue.push(...behaviours);
    },
    setFallback(behaviour) {
      current = behaviour;
    },
    respondWith(decider) {
      decide = decider;
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

/**
 * An `http://127.0.0.1:<port><root>` URL where nothing listens (the port was just freed), for
 * connection-refused tests.
 */
export async function unusedLocalUrl(root: string): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}${root}`;
}
