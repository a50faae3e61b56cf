import type { ToolCall } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { jsonLimitBreach } from '../validation/jsonValueLimits.js';
import { defaultAnswerLimits } from '../validation/validateModelAnswer.js';
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
  /** The tool's output as the run records it: the turn's text and `toolResult.result` ({@link observationOf}). */
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

/**
 * A `tool_observation` turn as its run records it. The client says what the tool gave twice over:
 * `content`, the observation as text (the protocol's example puts the finding there, and its
 * final answer quotes it), and `toolResult` (`result`, or `error` for a failure). The model reads
 * both, `content` first, and one of them when they say the same; without `toolResult.result` it
 * reads `content`.
 */
export function observationOf(turn: ConversationTurn): ClientObservation {
  const result = turn.toolResult;
  const ok = result?.success ?? true;
  const given = result !== undefined && 'result' in result && result.result !== undefined;
  const output = given ? withContent(turn.content, result.result) : turn.content;
  return { ok, output, content: turn.content, ...(result?.error !== undefined && { error: textWithContent(turn.content, result.error) }) };
}

/**
 * `content` and then the tool's result, as text; the result alone when `content` is empty or says
 * the same. A result past the limits of a tool's reply is left as it is, not written out: its run
 * records it as the call's failure (TOOL_OUTPUT_TOO_DEEP, …), as any tool's reply.
 */
function withContent(content: string, given: unknown): unknown {
  if (typeof given === 'string') return textWithContent(content, given);
  if (content.trim() === '' || jsonLimitBreach(given, defaultAnswerLimits) !== undefined) return given;
  return textWithContent(content, JSON.stringify(given));
}

function textWithContent(content: string, given: string): string {
  if (content.trim() === '' || given.trim() === content.trim()) return given;
  if (given.trim() === '') return content;
  return `${content}\n\n${given}`;
}

/**
 * The history with each observation of the query it continues as the run recorded it. A client's
 * result is recorded as any tool's reply: past the reply limits it is the call's failure
 * (`TOOL_RESPONSE_TOO_LARGE`, `TOOL_OUTPUT_TOO_DEEP`), and a secret in it is `[redacted]`. The
 * answer gives the client that history, so the next step, which must bring the history the log
 * has (else {@link matchHistory} finds a conflict), can.
 */
export function asRecorded(history: readonly ConversationTurn[], logged: readonly ToolCall[]): ConversationTurn[] {
  const lastUser = history.findLastIndex((turn) => turn.role === 'user');
  let call = 0;
  return history.map((turn, index) => {
    if (index <= lastUser || turn.role !== 'tool_observation') return turn;
    const recorded = logged[call];
    call += 1;
    if (recorded === undefined || recorded.status === 'requested') return turn;
    const observation = observationOf(turn);
    if (recorded.status === 'succeeded') {
      if (observation.ok && sameJson(recorded.output, observation.output)) return turn;
      // The turn as the log has it (redacted, say): its text is the recorded output, so the next
      // step reads the same observation from it.
      return { ...turn, ...(typeof recorded.output === 'string' && { content: recorded.output }), toolResult: { success: true, result: recorded.output } };
    }
    return observation.ok ? { ...turn, toolResult: { success: false, error: recorded.error?.message ?? 'the call failed' } } : turn;
  });
}

/** How the client's history stands against the run's log. */
export type HistoryMatch =
  /** The client knows every call the log has: nothing new, the step answers with where the run is. */
  | { readonly kind: 'same' }
  /** The client brings the observation of the call the run waits for. */
  | { readonly kind: 'answers'; readonly observation: ClientObservation; readonly iteration: number; readonly idempotencyKey: string }
  /**
   * The client is ahead of this log: it brings the observation of the call the run waits for and
   * the calls after it, which another server's log holds (a server without this session's log
   * rebuilt it from the history and took the steps since). `next` is the call the history makes next.
   */
  | { readonly kind: 'ahead'; readonly observation: ClientObservation; readonly idempotencyKey: string; readonly next: ClientCall }
  /** The client's history and the log disagree (409). */
  | { readonly kind: 'conflict'; readonly error: ErrorInfo };

/**
 * Compares the client's calls with the run's (the `tools.history` of its envelope). The client may
 * be behind the log (it retries a step whose answer it lost: the step answers again with where the
 * run is), one observation ahead (it brings the result the run waits for), or further ahead (the
 * log is another server's older copy of the session); anything else — another tool, other
 * arguments, another result — is a conflict.
 */
export function matchHistory(
  calls: readonly ClientCall[],
  logged: readonly ToolCall[],
  /** The observation as the run records a client's reply (limited, redacted), to compare with the log. */
  asLogged: (observation: ClientObservation, tool: string) => ClientObservation = (observation) => observation,
): HistoryMatch {
  for (let i = 0; i < calls.length; i += 1) {
    const client = calls[i] as ClientCall;
    const call = logged[i];
    if (call === undefined) return conflict(`the history has a call to ${client.tool} the session's run never proposed`, i);
    if (call.tool !== client.tool || !sameJson(call.input, client.input)) {
      return conflict(`call ${i + 1} differs: the run proposed ${call.tool} ${JSON.stringify(call.input)}, the history says ${client.tool} ${JSON.stringify(client.input)}`, i);
    }
    if (client.observation === undefined) continue;
    if (call.status === 'requested') {
      const next = calls[i + 1];
      if (next !== undefined) return { kind: 'ahead', observation: client.observation, idempotencyKey: call.idempotencyKey, next };
      return { kind: 'answers', observation: client.observation, iteration: call.iteration, idempotencyKey: call.idempotencyKey };
    }
    const loggedOk = call.status === 'succeeded';
    const seen = asLogged(client.observation, client.tool);
    if (loggedOk !== seen.ok || (loggedOk && !sameJson(call.output, seen.output))) {
      return conflict(`the observation of call ${i + 1} (${call.tool}) differs from the one the run recorded`, i);
    }
  }
  return { kind: 'same' };
}

/**
 * Compares the query the client's history gives with the one the session's run was started with
 * (its `run.started` input). A client that reuses a session id for another conversation, or sends
 * a question other than the one asked, gets a conflict (409) instead of another question's answer.
 *
 * @returns `undefined` when they agree, else a `REACT_STEP_HISTORY_CONFLICT` error.
 */
export function matchQuery(position: SessionPosition, loggedInput: unknown): ErrorInfo | undefined {
  if (loggedInput === position.query) return undefined;
  return errorInfo(ErrorCode.REACT_STEP_HISTORY_CONFLICT, `query ${position.queryNumber} of the session's log is not the query the history gives`, {
    path: position.newQuery ? '/user_query' : '/conversation_history',
    hint: 'a new conversation takes a new session_id; otherwise send the history as the last answer gave it (updated_conversation_history)',
  });
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
