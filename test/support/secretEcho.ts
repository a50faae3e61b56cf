// A flow whose model and tools all echo secrets back, for the redaction tests: a Chat Completions
// server (the fake one) whose final answer holds the API key, a tool.module that returns an
// environment variable, and a tool.http whose server echoes the request's headers (its
// Authorization) in a 200 body and in a 500 error.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { FakeChatServer } from './fakeChatCompletionsServer.js';

/** The secrets the run meets, each from a different place. */
export const SECRETS = {
  /** `OPENAI_API_KEY` of the process running the model. */
  apiKey: 'sk-echo-test-6f1d2a9b3c7e4f50',
  /** `ECHO_SERVICE_TOKEN`: an environment variable whose name says it is secret; the module tool returns it. */
  envToken: 'tok-env-echo-8c3b1e5d9a2f',
  /** A literal `authorization` header value in the tool.http node's config. */
  bearer: 'literal-bearer-0123456789abcdef',
} as const;

/** The environment the process running the flow needs. */
export function secretEnv(): Record<string, string> {
  return { OPENAI_API_KEY: SECRETS.apiKey, ECHO_SERVICE_TOKEN: SECRETS.envToken };
}

/** A local HTTP server that echoes each request's headers: `/ok` as 200 JSON, `/fail` as a 500 text body. */
export interface EchoServer {
  readonly port: number;
  /** The headers of every request, in order. */
  readonly requests: IncomingHttpHeaders[];
  stop(): Promise<void>;
}

/** Starts an {@link EchoServer} on 127.0.0.1 and a free port. */
export async function startEchoServer(): Promise<EchoServer> {
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    req.resume();
    req.on('end', () => {
      if (req.url === '/fail') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`upstream refused authorization=${String(req.headers.authorization)}`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ youSent: req.headers }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Writes the flow (`<dir>/<name>.json`) and its module tool (`<dir>/env_echo.mjs`) into `dir`.
 * Returns the flow's path.
 */
export async function writeSecretEchoFlow(dir: string, options: { readonly modelBaseUrl: string; readonly echoPort: number; readonly name?: string }): Promise<string> {
  await writeFile(
    path.join(dir, 'env_echo.mjs'),
    `export default {
  name: 'env_echo',
  description: 'Returns the service token from the environment',
  inputSchema: { type: 'object' },
  execute: () => ({ token: process.env.ECHO_SERVICE_TOKEN }),
};
`,
  );
  const flow = {
    id: options.name ?? 'secret-echo',
    nodes: [
      { id: 'question', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 5 } },
      { id: 'model', type: 'model.llm', config: { provider: 'openai', model: 'test-model', baseUrl: options.modelBaseUrl, maxRetries: 0 } },
      { id: 'env_echo', type: 'tool.module', config: { module: './env_echo.mjs' } },
      {
        id: 'http_echo',
        type: 'tool.http',
        config: {
          url: `http://127.0.0.1:${options.echoPort}/{mode}`,
          headers: { authorization: `Bearer ${SECRETS.bearer}` },
          inputSchema: { type: 'object', required: ['mode'], properties: { mode: { enum: ['ok', 'fail'] } } },
        },
      },
      { id: 'reply', type: 'response.chat' },
    ],
    edges: [
      { id: 'e1', source: 'question', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'env_echo' },
      { id: 'e4', source: 'agent', target: 'http_echo' },
      { id: 'e5', source: 'agent', target: 'reply' },
    ],
  };
  const flowPath = path.join(dir, `${options.name ?? 'secret-echo'}.json`);
  await writeFile(flowPath, JSON.stringify(flow, null, 2));
  return flowPath;
}

/** The model's four answers: the env tool, the echo tool (200, then 500), and a final answer quoting the key. */
export function enqueueEchoConversation(model: FakeChatServer): void {
  const tool = (name: string, input: object) => JSON.stringify({ action: 'tool', tool: name, input, confidence: 0.5 });
  model.enqueue(
    { kind: 'completion', content: tool('env_echo', {}) },
    { kind: 'completion', content: tool('http_echo', { mode: 'ok' }) },
    { kind: 'completion', content: tool('http_echo', { mode: 'fail' }) },
    { kind: 'completion', content: JSON.stringify({ action: 'final', message: `done; the key is ${SECRETS.apiKey}`, confidence: 0.9 }) },
  );
}

/** Fails when `text` holds any of the secrets (as is, or as it appears inside JSON text). */
export function expectNoSecret(text: string, what: string): void {
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(text.includes(secret), `${what} shows ${name}`).toBe(false);
  }
}
