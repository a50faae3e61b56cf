import type { ToolCall } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import type { ConversationTurn, ReactStepRequest } from './reactStepTypes.js';

/**
 * Where a step request stands in its session. A session runs one Redflow run per user query; the
 * client's history says which query this step belongs to and what happened since it was asked.
 */
export interface SessionPosition {
  /** 1 for the session's first query, 2 for the second…: the run's trace id is `<session>-q<n>`. */
  readonly queryNumber: number;
  readonly query: string;
  /** The turns before this query: the conversation the run starts from. */
  readonly earlierTurns: readonly ConversationTurn[];
  /** The tool calls since this query, each with the client's observation when it has one. */
  readonly calls: readonly ClientCall[];
  /** True when the request brings a new query (a new run), false when it continues one. */
  readonly newQuery: boolean;
}

/** A tool call as the client's history records it. */
export interface ClientCall {
  readonly tool: string;
  readonly input: Record<string, unknown>;
  readonly observation?: ClientObservation;
}

/** What the client's execution of a tool gave. */
export interface ClientObservation {
  readonly ok: boolean;
  /** The tool's output as the run records it: `toolResult.result`, or the turn's text. */
  readonly output: unknown;
  readonly error?: string;
  readonly content: string;
}

/** The trace id of a session's nth query. */
export function sessionTraceId(sessionId: string, queryNumber: number): string {
  return `${sessionId}-q${queryNumber}`;
}

/**
 * Reads a step request's history: which query it belongs to, the turns before it, and the tool
 * calls and observations since. A request with a `user_query` starts the next query; an empty one
 * continues the last query of the history (it brings an observation, or asks again).
 *
 * @returns the position, or a `REACT_STEP_HISTORY_INVALID` error (400) saying which turn is wrong.
 */
export function sessionPosition(request: ReactStepRequest): SessionPosition | ErrorInfo {
  const history = request.conversation_history;
  const newQuery = request.user_query.trim() !== '';
  const lastUser = history.findLastIndex((turn) => turn.role === 'user');
  const users = history.filter((turn) => turn.role === 'user').length;
  if (newQuery) {
    return { queryNumber: users + 1, query: request.user_query, earlierTurns: history, calls: [], newQuery };
  }
  if (lastUser === -1) {
    return invalid('the step has no user_query and the history has no user turn to continue', '/user_query');
  }
  const since = history.slice(lastUser + 1);
  const calls = callsSince(since, lastUser + 1);
  if (!Array.isArray(calls)) return calls;
  return { queryNumber: users, query: (history[lastUser] as ConversationTurn).content, earlierTurns: history.slice(0, lastUser), calls, newQuery };
}

/** The calls in the turns after a query: assistant turns with a toolCall, each answered by the next observation. */
function callsSince(turns: readonly ConversationTurn[], offset: number): ClientCall[] | ErrorInfo {
  const calls: ClientCall[] = [];
  for (let i = 0; i < turns.length; i += 1) {
    const turn = turns[i] as ConversationTurn;
    const at = `/conversation_history/${offset + i}`;
    if (turn.role === 'tool_observation') {
      const open = calls[calls.length - 1];
      if (open === undefined || open.observation !== undefined) return invalid('a tool_observation turn answers no tool call before it', at);
      calls[calls.length - 1] = { ...open, observation: observationOf(turn) };
      continue;
    }
    if (turn.toolCall === undefined) {
      return invalid('the query was already answered (an assistant turn without a toolCall): send a new user_query', at);
    }
    const open = calls[calls.length - 1];
    if (open !== undefined && open.observation === undefined) return invalid('a tool call follows another one with no observation between them', at);
    calls.push({ tool: turn.toolCall.name, input: turn.toolCall.parameters });
  }
  return calls;
}

function observationOf(turn: ConversationTurn): ClientObservation {
  const result = turn.toolResult;
  const ok = result?.success ?? true;
  const output = result !== undefined && 'result' in result && result.result !== undefined ? result.result : turn.content;
  return { ok, output, content: turn.content, ...(result?.error !== undefined && { error: result.error }) };
}

/** How the client's history stands against the run's log. */
export type HistoryMatch =
  /** The client knows every call the log has: nothing new, the step answers with where the run is. */
  | { readonly kind: 'same' }
  /** The client brings the observation of the call the run waits for. */
  | { readonly kind: 'answers'; readonly observation: ClientObservation; readonly iteration: number; readonly idempotencyKey: string }
  /** The client's history and the log disagree (409). */
  | { readonly kind: 'conflict'; readonly error: ErrorInfo };

/**
 * Compares the client's calls with the run's (the `tools.history` of its envelope). The client may
 * be behind the log (it retries a step whose answer it lost: the step answers again with where the
 * run is) or one observation ahead (it brings the result the run waits for); anything else —
 * another tool, other arguments, another result, a call the log never proposed — is a conflict.
 */
export function matchHistory(calls: readonly ClientCall[], logged: readonly ToolCall[]): HistoryMatch {
  for (let i = 0; i < calls.length; i += 1) {
    const client = calls[i] as ClientCall;
    const call = logged[i];
    if (call === undefined) return conflict(`the history has a call to ${client.tool} the session's run never proposed`, i);
    if (call.tool !== client.tool || !sameJson(call.input, client.input)) {
      return conflict(`call ${i + 1} differs: the run proposed ${call.tool} ${JSON.stringify(call.input)}, the history says ${client.tool} ${JSON.stringify(client.input)}`, i);
    }
    if (client.observation === undefined) continue;
    if (call.status === 'requested') {
      if (i !== calls.length - 1) return conflict(`call ${i + 1} has an observation the run never recorded, and more follows it`, i);
      return { kind: 'answers', observation: client.observation, iteration: call.iteration, idempotencyKey: call.idempotencyKey };
    }
    const loggedOk = call.status === 'succeeded';
    if (loggedOk !== client.observation.ok || (loggedOk && !sameJson(call.output, client.observation.output))) {
      return conflict(`the observation of call ${i + 1} (${call.tool}) differs from the one the run recorded`, i);
    }
  }
  return { kind: 'same' };
}

function conflict(message: string, callIndex: number): HistoryMatch {
  return {
    kind: 'conflict',
    error: errorInfo(ErrorCode.REACT_STEP_HISTORY_CONFLICT, message, {
      hint: `send the session's history as the last answer gave it (updated_conversation_history); call ${callIndex + 1} is where it differs`,
    }),
  };
}

function invalid(message: string, path: string): ErrorInfo {
  return errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, message, { path, hint: 'send the turns as the last answer gave them in updated_conversation_history' });
}

/** Equal as JSON values, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
}
