import type { ServerResponse } from 'node:http';
import { errorAnswer, type ErrorAnswer } from './apiErrors.js';
import { redactSecrets } from '../secrets/secrets.js';

/**
 * Sends `body` as JSON, with every secret the server knows redacted (a run's data, an error's
 * message or hint). API answers are never cached: they describe runs and files that change under
 * the client's feet.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = redactSecrets(JSON.stringify(body));
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

/** Sends an answer without a body (204). */
export function sendNoContent(res: ServerResponse): void {
  res.writeHead(204, { 'Cache-Control': 'no-store' });
  res.end();
}

/**
 * Sends whatever a route threw as the API's error body, and returns the answer so the caller can
 * log an unexpected error (on the server only: its message may reveal internals).
 */
export function sendError(res: ServerResponse, thrown: unknown): ErrorAnswer {
  const answer = errorAnswer(thrown);
  sendJson(res, answer.status, answer.body, answer.headers);
  return answer;
}
