// Helpers for the `redflow serve` tests: a real server on a free port in temporary directories, a
// raw HTTP client (node:http, so paths such as `/api/flows/../x` reach the server as written:
// fetch would normalise them), an SSE reader, flows with scripted models, and the gate tool.
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRedflowServer, type RedflowServer, type RedflowServerOptions } from '../../src/server/server.js';
import type { ApiErrorBody } from '../../src/server/apiTypes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The gate tool (test/fixtures/server/gate.mjs): waits until {@link openGate}. */
export const GATE_TOOL = path.resolve(here, '../fixtures/server/gate.mjs');

/** Temporary directories, removed by `cleanup()`. */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(prefix = 'redflow-serve-'): Promise<string> {
      const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

/** A server under test, with its directories. */
export interface TestServer {
  readonly server: RedflowServer;
  readonly root: string;
  readonly flowsDir: string;
  readonly runsDir: string;
  readonly editorDir: string;
  close(): Promise<void>;
}

/** Starts `redflow serve` (programmatically) on 127.0.0.1, port 0, in a fresh temporary directory. */
export async function startTestServer(dirs: ReturnType<typeof tempDirs>, options: RedflowServerOptions = {}): Promise<TestServer> {
  const root = await dirs.make();
  const flowsDir = path.join(root, 'flows');
  const runsDir = path.join(root, 'runs');
  const editorDir = path.join(root, 'editor');
  // The gate tool lives with the fixtures, outside the temporary flows directory: allowed by name.
  const server = await createRedflowServer({ flowsDir, runsDir, editorDir, port: 0, env: {}, allowFiles: [path.dirname(GATE_TOOL)], ...options });
  return { server, root, flowsDir, runsDir, editorDir, close: () => server.close() };
}

/** An HTTP answer, read whole. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: unknown;
  /** The body's `error`, for error answers. */
  readonly error: ApiErrorBody['error'] | undefined;
}

/** Options of {@link call}. */
export interface CallOptions {
  /** Sent as JSON with `Content-Type: application/json`, unless `rawBody` is given. */
  readonly body?: unknown;
  /** Sent as is (with the headers given). */
  readonly rawBody?: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the helpers below need of a server: its port on 127.0.0.1 (a server object, or a `redflow serve` process's). */
export type ServerPort = Pick<RedflowServer, 'port'>;

/** Sends one request to the server with the path exactly as given. */
export function call(server: ServerPort, method: string, requestPath: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | Buffer | undefined = options.rawBody;
  if (payload === undefined && options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (payload !== undefined) headers['content-length'] ??= String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path: requestPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const error = (json as Partial<ApiErrorBody> | undefined)?.error;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, error });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** One frame of an SSE stream. */
export interface SseFrame {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly retry?: string;
  /** A comment line (`: keepalive`) without the colon. */
  readonly comment?: string;
}

/** An SSE connection being read. */
export interface SseReader {
  readonly response: IncomingMessage;
  readonly frames: SseFrame[];
  /** Resolves with the first frame (from the start) that matches, waiting for it if need be. */
  waitFor(match: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** Drops the connection as a network failure would. */
  destroy(): void;
}

/** Opens an SSE stream; rejects with the answer when the server does not start one (a 404, a 401). */
export function openSse(server: ServerPort, requestPath: string, headers: Readonly<Record<string, string>> = {}): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'GET', path: requestPath, headers: { accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') })));
        return;
      }
      const frames: SseFrame[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          frames.push(parseFrame(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
        }
        for (const wake of [...waiters]) wake();
      });
      const ended = new Promise<void>((resolveEnd) => {
        res.on('end', () => resolveEnd());
        res.on('close', () => resolveEnd());
      });
      resolve({
        response: res,
        frames,
        ended,
        destroy: () => req.destroy(),
        waitFor(match, timeoutMs = 10_000) {
          return new Promise((found, fail) => {
            const check = () => {
              const frame = frames.find(match);
              if (!frame) return false;
              waiters.delete(check);
              clearTimeout(timer);
              found(frame);
              return true;
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching SSE frame within ${timeoutMs} ms; got ${JSON.stringify(frames)}`));
            }, timeoutMs);
            if (!check()) waiters.add(check);
          });
        },
      });
    });
    req.end();
  });
}

function parseFrame(text: string): SseFrame {
  const frame: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      frame[field] = frame[field] === undefined ? value : `${frame[field]}\n${value}`;
    }
  }
  return frame;
}

/** A flow with a scripted model giving `answers`, and the gate tool (named `gate`). */
export function scriptedFlow(answers: readonly unknown[], extra: { readonly name?: string; readonly inputSchema?: object } = {}) {
  return {
    ...(extra.name !== undefined && { name: extra.name }),
    nodes: [
      { id: 'in', type: 'trigger.input', ...(extra.inputSchema && { config: { inputSchema: extra.inputSchema } }) },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 5, allowedTools: ['gate'] } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers } },
      { id: 'gate', type: 'tool.module', config: { module: GATE_TOOL } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'gate' },
    ],
  };
}

/** Shorthand scripted answers. */
export const answer = {
  gate: (confidence = 0.5) => ({ action: 'tool', tool: 'gate', input: {}, confidence }),
  final: (message: string, confidence = 0.9) => ({ action: 'final', message, confidence }),
};

type GlobalGates = { __redflowGates?: (() => void)[] };

/** Forgets gates left by an earlier test. */
export function resetGates(): void {
  (globalThis as GlobalGates).__redflowGates = [];
}

/** Waits until a gate tool call is waiting, and lets it through. */
export async function openGate(timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gate = (globalThis as GlobalGates).__redflowGates?.shift();
    if (gate) return gate();
    if (Date.now() > deadline) throw new Error('no gate tool call was waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Polls `GET /api/runs/:traceId` (with `token` as the bearer token when given) until `done` says so. */
export async function waitForRun(server: ServerPort, traceId: string, done: (run: { status: string; lastSeq: number }) => boolean, timeoutMs = 10_000, token?: string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await call(server, 'GET', `/api/runs/${traceId}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    const run = answer.json as { status: string; lastSeq: number; outcome?: { status: string; reason: string; error?: { code: string } } };
    if (answer.status === 200 && done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${traceId} did not get there: ${answer.text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
