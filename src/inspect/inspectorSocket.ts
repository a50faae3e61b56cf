import WebSocket from 'ws';
import type { InspectorMessage } from './inspectorMessage.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { toJsonSafe } from './jsonSafe.js';

/** How long to wait for the inspector's WebSocket to open before giving up. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long `close()` waits for queued messages to be written, then for the close handshake. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 5_000;

/**
 * One WebSocket to an inspector receiver (the relay, or anything speaking its protocol: one JSON
 * text message per Stately inspection event, what @statelyai/inspect's WebSocket adapter sends).
 *
 * It replaces that adapter because, in @statelyai/inspect 0.7.2, the adapter keeps only the last
 * 200 messages queued before the socket opens, retries a failed connection every 5 s forever
 * (and `stop()` does not cancel the retry, so the process never exits), never reports the
 * failure, and cannot tell when a message has actually been written, so closing may lose the last
 * ones. Here the socket is open before anything is sent, a failure is an error with a code, and
 * {@link InspectorSocket.flush} waits for every write.
 */
export interface InspectorSocket {
  readonly url: string;
  /** False once the connection has closed (or failed): later messages are dropped. */
  readonly open: boolean;
  /** Messages that could not be sent (the connection was gone, or a write failed). */
  readonly dropped: number;
  /** Sends one message. Never throws: a message that cannot be sent is counted in `dropped`. */
  send(message: InspectorMessage): void;
  /** Resolves once every message sent so far has been written to the connection (or dropped). */
  flush(timeoutMs?: number): Promise<void>;
  /** Flushes, then closes the connection with a close handshake. Idempotent. */
  close(timeoutMs?: number): Promise<void>;
}

/** Options of {@link connectInspectorSocket}. */
export interface InspectorSocketOptions {
  readonly timeoutMs?: number;
  /** Called once, the first time the connection is lost or a write fails after it opened. */
  readonly onError?: (error: RedflowError) => void;
}

const unavailable = (message: string, hint: string) => new RedflowError(errorInfo(ErrorCode.INSPECT_UNAVAILABLE, message, { hint }));

/**
 * Opens a WebSocket to an inspector receiver and resolves once it is open. Rejects with
 * `INSPECT_UNAVAILABLE` (and a hint) when the URL is not a WebSocket URL, nothing answers there, or
 * it does not open within `timeoutMs`.
 *
 * @example
 * ```ts
 * const socket = await connectInspectorSocket('ws://127.0.0.1:8080');
 * socket.send(message);
 * await socket.close(); // every message written first
 * ```
 */
export async function connectInspectorSocket(url: string, options: InspectorSocketOptions = {}): Promise<InspectorSocket> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const hint = 'start the inspector receiver first, or leave out --inspect-url to let redflow start its own relay';
  let ws: WebSocket;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new Error(`${parsed.protocol} is not ws: or wss:`);
    ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
  } catch (error) {
    throw unavailable(`"${url}" is not a WebSocket URL: ${(error as Error).message}`, 'give one like ws://127.0.0.1:8080');
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(unavailable(`the inspector at ${url} did not answer within ${timeoutMs} ms`, hint));
    }, timeoutMs);
    ws.once('open', () => {
      clearTimeout(timer);
      resolve();
    });
    ws.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(unavailable(`cannot reach the inspector at ${url}: ${error.code ?? error.message}`, hint));
    });
  });

  let open = true;
  let dropped = 0;
  let inFlight = 0;
  let reported = false;
  let closing: Promise<void> | undefined;
  const idle = new Set<() => void>();
  const settle = () => {
    if (inFlight <= 0 || !open) for (const resolve of idle) resolve();
  };
  const report = (message: string) => {
    if (reported) return;
    reported = true;
    try {
      options.onError?.(unavailable(message, 'the run goes on; what was sent before is in the inspector, and `redflow inspect <log>` replays the whole run'));
    } catch {
      // A listener's failure must not reach the run.
    }
  };
  // After the handshake an error is only reported: the connection is the inspector's, the run is ours.
  ws.on('error', (error: NodeJS.ErrnoException) => report(`the connection to the inspector at ${url} failed: ${error.code ?? error.message}`));
  ws.on('close', () => {
    if (open && !closing) report(`the inspector at ${url} closed the connection`);
    open = false;
    // Nothing more will be written: whoever waits for a flush stops waiting.
    settle();
  });

  const flush = (flushTimeoutMs = DEFAULT_CLOSE_TIMEOUT_MS): Promise<void> => {
    if (inFlight <= 0 || !open) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        idle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, flushTimeoutMs);
      idle.add(done);
    });
  };

  return {
    url,
    get open() {
      return open && ws.readyState === WebSocket.OPEN;
    },
    get dropped() {
      return dropped;
    },
    send(message) {
      if (!open || ws.readyState !== WebSocket.OPEN) {
        dropped += 1;
        return;
      }
      let text: string;
      try {
        text = JSON.stringify(toJsonSafe(message));
      } catch {
        dropped += 1;
        return;
      }
      inFlight += 1;
      // The callback runs once the frame is written to the connection (or could not be): what flush waits for.
      ws.send(text, (error) => {
        inFlight -= 1;
        if (error) {
          dropped += 1;
          report(`a message to the inspector at ${url} could not be written: ${error.message}`);
        }
        settle();
      });
    },
    flush,
    close(closeTimeoutMs = DEFAULT_CLOSE_TIMEOUT_MS) {
      closing ??= (async () => {
        await flush(closeTimeoutMs);
        if (ws.readyState === WebSocket.CLOSED) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            ws.terminate();
            resolve();
          }, closeTimeoutMs);
          ws.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          ws.close(1000, 'done');
        });
        open = false;
      })();
      return closing;
    },
  };
}
