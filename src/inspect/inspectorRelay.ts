import { openBrowser } from './openBrowser.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { DEFAULT_INSPECTOR_LOAD_TIMEOUT_MS, bridgePage } from './bridgePage.js';
import { createPageWatch, pageReport, type InspectorPageState } from './pageWatch.js';
import { DEFAULT_RELAY_BUFFER, DEFAULT_RELAY_PORT } from './relayDefaults.js';

export type { InspectorPageState } from './pageWatch.js';

export { DEFAULT_RELAY_BUFFER, DEFAULT_RELAY_PORT };
/** The Stately inspector UI the relay's page embeds: a hosted page, so the browser needs the internet. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';
/** How long {@link InspectorRelay.stop} lets pages read what was sent to them before it cuts them off. */
const CLOSE_GRACE_MS = 1000;

/** And at most this many characters of them: live snapshots carry the whole envelope. */
export const DEFAULT_RELAY_BUFFER_CHARS = 64 * 1024 * 1024;

/** Options of {@link startInspectorRelay}. */
export interface InspectorRelayOptions {
  /** Default {@link DEFAULT_RELAY_PORT}; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1: the messages carry run data (inputs, tool outputs), so not the network. */
  readonly host?: string;
  /** Open the page in the default browser once listening (default true). */
  readonly open?: boolean;
  /** The inspector UI to embed (default {@link STATELY_INSPECTOR_URL}). */
  readonly inspectorUrl?: string;
  /** How long the page waits for that UI before it says it cannot load it (default 10 s). */
  readonly inspectorLoadTimeoutMs?: number;
  /** How many messages to keep for pages that connect later (default {@link DEFAULT_RELAY_BUFFER}). */
  readonly bufferSize?: number;
  /** How many characters of messages to keep for them (default {@link DEFAULT_RELAY_BUFFER_CHARS}). */
  readonly bufferChars?: number;
}

/** A running relay. */
export interface InspectorRelay {
  readonly port: number;
  /** The page to open in a browser: it embeds the Stately inspector and feeds it what the relay receives. */
  readonly pageUrl: string;
  /** Where inspectors (redflow, or any @statelyai/inspect WebSocket inspector) send their messages. */
  readonly socketUrl: string;
  /** Whether the browser was asked to open the page. */
  readonly opened: boolean;
  /**
   * Resolves once a page has reported on the hosted inspector (`loaded` or `unavailable`), or
   * after `timeoutMs` (default: no limit) or when the relay stops, with what it knows then.
   */
  waitForPage(timeoutMs?: number): Promise<InspectorPageState>;
  /**
   * Closes every client (a page first reads what was already sent to it, for up to a second) and
   * stops listening. Idempotent.
   */
  stop(): Promise<void>;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The host part of a Host header or an origin's authority, without the port. */
function hostName(authority: string | undefined): string | undefined {
  if (!authority) return undefined;
  const bracket = authority.match(/^\[[^\]]*\]/);
  return bracket ? bracket[0] : authority.split(':')[0];
}

/**
 * Starts the relay that bridges inspectors to the Stately inspector UI in a browser: an HTTP page
 * embedding the UI, and a WebSocket server that hands every message one client sends to all the
 * others (and, to a client that connects later, the last `bufferSize` messages). Compatible with
 * `createInspectorServer` of `@statelyai/inspect/server`, which it replaces because in 0.7.2 that
 * one crashes the process when its port is taken (an unhandled `error` event), says neither when it
 * listens nor on which port, cannot be stopped while a browser is connected, and keeps only 200
 * messages for a page that opens late — less than one replayed run of 100 events (this one keeps
 * `bufferSize` messages, at most `bufferChars` characters of them). This one also
 * listens on 127.0.0.1 by default and refuses browser connections from other origins (any web
 * page could otherwise open a WebSocket to it and read the runs).
 *
 * Rejects with `INSPECT_UNAVAILABLE` when it cannot listen (the port is taken, or not allowed).
 *
 * @example
 * ```ts
 * const relay = await startInspectorRelay({ port: 0, open: false });
 * console.log(`open ${relay.pageUrl}`);
 * const socket = await connectInspectorSocket(relay.socketUrl);
 * ```
 */
export async function startInspectorRelay(options: InspectorRelayOptions = {}): Promise<InspectorRelay> {
  const host = options.host ?? '127.0.0.1';
  const requestedPort = options.port ?? DEFAULT_RELAY_PORT;
  const bufferSize = options.bufferSize ?? DEFAULT_RELAY_BUFFER;
  const bufferChars = options.bufferChars ?? DEFAULT_RELAY_BUFFER_CHARS;
  const loopback = LOOPBACK_NAMES.has(host);
  const page = bridgePage(options.inspectorUrl ?? STATELY_INSPECTOR_URL, options.inspectorLoadTimeoutMs ?? DEFAULT_INSPECTOR_LOAD_TIMEOUT_MS);
  // Bound to loopback, only loopback names are served: a page whose name was rebound to 127.0.0.1 gets nothing.
  const hostAllowed = (header: string | undefined) => !loopback || LOOPBACK_NAMES.has(hostName(header) ?? '');

  const server = http.createServer((request, response) => {
    if (!hostAllowed(request.headers.host)) {
      response.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden host\n');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
  });
  const wss = new WebSocketServer({
    server,
    // Node clients send no Origin; a browser's must be the relay's own page.
    verifyClient: ({ origin, req }: { origin: string | undefined; req: http.IncomingMessage }) => hostAllowed(req.headers.host) && (!origin || origin === `http://${req.headers.host ?? ''}`),
  });
  const buffer: string[] = [];
  let buffered = 0;
  const pages = createPageWatch();
  wss.on('connection', (client, request) => {
    // A browser sends an Origin: that client is a page; redflow's own sockets send none.
    if (request.headers.origin) pages.opened();
    for (const message of buffer) client.send(message);
    client.on('error', () => undefined);
    client.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = data.toString();
      const report = pageReport(message);
      if (report !== undefined) {
        pages.reported(report);
        return;
      }
      buffer.push(message);
      buffered += message.length;
      // The oldest go first: a late page sees the end of a long session rather than the relay running out of memory.
      while (buffer.length > bufferSize || (buffered > bufferChars && buffer.length > 1)) buffered -= (buffer.shift() as string).length;
      for (const other of wss.clients) if (other !== client && other.readyState === WebSocket.OPEN) other.send(message);
    });
  });
  // Errors after listening (a client's bad handshake) are the client's problem, not the process's.
  wss.on('error', () => undefined);

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const taken = error.code === 'EADDRINUSE';
      reject(
        new RedflowError(
          errorInfo(
            ErrorCode.INSPECT_UNAVAILABLE,
            taken
              ? `cannot start the inspector relay: port ${requestedPort} on ${host} is in use`
              : `cannot start the inspector relay on ${host}:${requestedPort}: ${error.code ?? error.message}`,
            {
              hint: taken
                ? `choose another port with --inspect-port <n>, or send to the relay already there with --inspect-url ws://127.0.0.1:${requestedPort}`
                : 'choose another port with --inspect-port <n> (ports below 1024 need privileges)',
            },
          ),
          { cause: error },
        ),
      );
    };
    server.once('error', onError);
    server.listen(requestedPort, host, () => {
      server.off('error', onError);
      server.on('error', () => undefined);
      resolve();
    });
  });

  const port = (server.address() as AddressInfo).port;
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const pageUrl = `http://${authority}`;
  const opened = options.open ?? true;
  if (opened) openBrowser(pageUrl);
  let stopping: Promise<void> | undefined;
  return {
    port,
    pageUrl,
    socketUrl: `ws://${authority}`,
    opened,
    waitForPage: (timeoutMs) => pages.wait(timeoutMs),
    stop() {
      stopping ??= (async () => {
        pages.stopped();
        // A close frame follows what was sent before it, so a page reads the whole run first; but
        // ws does not close the connections of a server it shares, and a browser tab that does not
        // answer would keep the process alive: whatever is left after the grace is cut off.
        for (const client of wss.clients) client.close(1001, 'the relay stops');
        await new Promise<void>((resolve) => {
          const cutOff = setTimeout(resolve, CLOSE_GRACE_MS);
          const check = () => {
            if (wss.clients.size > 0) return;
            clearTimeout(cutOff);
            resolve();
          };
          for (const client of wss.clients) client.once('close', check);
          check();
        });
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return stopping;
    },
  };
}
