import path from 'node:path';
import type { RunWait } from '../events/pendingWait.js';

/** The command that answers each kind of wait, given how it names the run (its log, or its trace id and server). */
const ANSWER_COMMANDS: { readonly [K in RunWait['kind']]: (run: string) => string } = {
  approval: (run) => `redflow approve ${run} [--reason <text>], or redflow deny ${run} --reason <text>`,
  client: (run) => `redflow tool-result ${run} --output <json> (or --error <message>)`,
  human: (run) => `redflow answer ${run} --text <answer>`,
};

/** The HTTP API route that answers each kind of wait, and the body it takes. */
const ANSWER_ROUTES: { readonly [K in RunWait['kind']]: (traceId: string) => string } = {
  approval: (traceId) => `POST /api/runs/${traceId}/approval with {"decision":"approve"} or {"decision":"deny","reason":"…"}`,
  client: (traceId) => `POST /api/runs/${traceId}/tool-results with {"ok":true,"output":…}`,
  human: (traceId) => `POST /api/runs/${traceId}/answer with {"text":"…"}`,
};

/**
 * How to answer a run of `redflow mcp` that waits: the command, on its log in the runs folder.
 *
 * @example
 * ```ts
 * answerOnLog('.redflow/runs')('abc', wait); // 'redflow approve /abs/.redflow/runs/abc.jsonl [--reason <text>], or …'
 * ```
 */
export function answerOnLog(runsDir: string): (traceId: string, wait: RunWait) => string {
  return (traceId, wait) => ANSWER_COMMANDS[wait.kind](path.resolve(runsDir, `${traceId}.jsonl`));
}

/**
 * How to answer a run of `redflow serve --mcp` that waits: the API route, or the command with `--server`.
 *
 * @example
 * ```ts
 * answerOnServer(() => 'http://127.0.0.1:4800/')('abc', wait); // 'POST /api/runs/abc/approval with …; or redflow approve abc --server …'
 * ```
 */
export function answerOnServer(url: () => string): (traceId: string, wait: RunWait) => string {
  return (traceId, wait) => `${ANSWER_ROUTES[wait.kind](traceId)} on ${url()}; or ${ANSWER_COMMANDS[wait.kind](`${traceId} --server ${url()}`)}`;
}
