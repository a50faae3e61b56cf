/**
 * The HTTP API of `redflow serve`, as types: the one contract between the server and the editor
 * (the editor imports this file; it holds types and constants only, so it is browser-safe).
 *
 * Every error is `{ error: { code, message, hint? } }` with an HTTP status, and `code` is one of
 * `ErrorCode`. When the server has a token (it must when bound to a non-local address) every
 * `/api` request needs `Authorization: Bearer <token>` (the SSE stream also accepts `?token=`,
 * since EventSource cannot send headers); a missing or wrong token is a 401 `HTTP_UNAUTHORIZED`.
 */
import type { AgentEnvelope, FlowDefinition, RunOutcome } from '../contracts/schema-types.js';
import type { ErrorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { RunWait } from '../events/pendingWait.js';
import type { FlowDiagnostic } from '../flows/diagnostics.js';

/** The API's routes, defined once (the server matches them; the editor builds its URLs from them). */
export const ApiRoute = {
  /** GET → {@link HealthResponse}. */
  health: '/api/health',
  /** GET → {@link FlowListResponse}. */
  flows: '/api/flows',
  /** GET → the flow file's JSON; PUT (a flow) → {@link FlowSavedResponse}; DELETE → 204. `id` may hold `/`. */
  flow: (id: string) => `/api/flows/${id.split('/').map(encodeURIComponent).join('/')}`,
  /** POST (a flow) → {@link ValidationResponse}. */
  validate: '/api/validate',
  /**
   * POST (`ReactStepRequest`, schemas/http/react-step-request.schema.json) → 200 `ReactStepResponse`:
   * one step of a ReAct session whose tools the client executes. 400 with every wrong field in
   * `fields`, 409 `REACT_STEP_HISTORY_CONFLICT`, 413 over 4 MiB.
   */
  reactStep: '/api/agent/react_step',
  /** GET → {@link RunListResponse}; POST ({@link StartRunRequest}) → 201 {@link RunStartedResponse}. */
  runs: '/api/runs',
  /**
   * POST (an AG-UI `RunAgentInput`) → `text/event-stream` of AG-UI events: starts a run of the flow
   * from the last user message, or answers the wait of one of its runs (docs/ag-ui.md).
   */
  flowAgui: (id: string) => `/api/flows/${id.split('/').map(encodeURIComponent).join('/')}/ag-ui`,
  /** GET → `text/event-stream` of AG-UI events: the run from its log, then live, until it ends or waits. */
  runAgui: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/ag-ui`,
  /** GET → {@link RunResponse}. */
  run: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}`,
  /** GET → {@link RunEventsResponse}: the run's log so far. `?after=<seq>` skips the first events. */
  runEvents: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/events`,
  /**
   * GET → `text/event-stream`. Each event is `id: <seq>`, `event: agent-event`, `data: <AgentEvent>`;
   * after the run's last event comes `event: end`, `data: <RunResponse>`, and the stream closes.
   * Resumes after `Last-Event-ID` (or `?after=<seq>`): no event is lost or repeated.
   */
  runStream: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/stream`,
  /** POST ({@link AbortRunRequest}, optional) → 202 {@link RunResponse}; 409 `RUN_ALREADY_FINISHED`. */
  abortRun: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/abort`,
  /**
   * POST ({@link ApprovalRequest}) → 202 {@link RunResponse}: approves or denies the call the run
   * waits on, and the run goes on; 409 `RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`,
   * `WAIT_ANSWER_MISMATCH`, `RUN_ALREADY_FINISHED`.
   */
  runApproval: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/approval`,
  /** POST ({@link ToolResultRequest}) → 202 {@link RunResponse}: the result of the client tool the run waits for; 409 as {@link ApiRoute.runApproval}. */
  runToolResults: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/tool-results`,
  /** POST ({@link AnswerRequest}) → 202 {@link RunResponse}: a person's answer to the question the run waits on (escalate, request_info); 409 as {@link ApiRoute.runApproval}. */
  runAnswer: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/answer`,
  /**
   * POST ({@link ForkRunRequest}) → 201 {@link RunForkedResponse}: a new run that replays this one's
   * log up to an iteration and goes on live from there (docs/forks.md); 400
   * `FORK_POINT_OUT_OF_RANGE`, 409 `FORK_RUN_STILL_RUNNING`, 422 `FORK_PREFIX_INCOMPATIBLE`.
   */
  forkRun: (traceId: string) => `/api/runs/${encodeURIComponent(traceId)}/fork`,
  /** GET → {@link RunDiff}: run `a` and run `b` compared iteration by iteration (docs/diff.md). */
  diffRuns: (a: string, b: string) => `/api/runs/${encodeURIComponent(a)}/diff/${encodeURIComponent(b)}`,
} as const;

/** The SSE event names of {@link ApiRoute.runStream}. */
export const StreamEvent = {
  AgentEvent: 'agent-event',
  /**
   * A piece of the answer's text as the model streams it (`RunChunk`: `traceId`, `iteration`,
   * `attempt`, `text`: a final answer's message, never the answer format's JSON), without an id: it is not in the log, and a reconnect does not get it again.
   */
  Chunk: 'chunk',
  /**
   * With `?activity=1`: the run's activity (`AgentActivityData`: `turn_start`, `content_chunk`,
   * `thinking`, `tool_call_start`, `tool_progress`, `tool_call_end`, `turn_end`, `error`), in order, after the event
   * or piece it comes from; without an id.
   */
  Activity: 'activity',
  End: 'end',
} as const;

/** The error body of every non-2xx answer. */
export interface ApiErrorBody {
  readonly error: ErrorInfo;
  /**
   * When the error is about a flow (a save that is not a flow at all, a run of a flow that does not
   * validate): every error and warning found, each with its path, node id or edge id.
   */
  readonly diagnostics?: readonly FlowDiagnostic[];
  /** When a body has several wrong fields (`POST /api/agent/react_step`): each one. */
  readonly fields?: readonly { readonly path: string; readonly message: string }[];
}

/** `GET /api/health`. */
export interface HealthResponse {
  readonly ok: true;
  readonly version: string;
  /** Where runs run: in the server's process, on a NATS cluster of workers, or in a Node-RED (`serve --node-red`). */
  readonly mode: 'embedded' | 'nats' | 'node-red';
  /** True when `--inspect` feeds the Stately inspector. */
  readonly inspect: boolean;
}

/** One flow file of the flows directory. */
export interface FlowSummary {
  /** The file's path in the flows directory without `.json`, with `/` between folders. */
  readonly id: string;
  readonly name?: string;
  readonly description?: string;
  /** ISO time of the file's last change. */
  readonly updatedAt: string;
  /** False when the file does not validate (it can still be opened and fixed). */
  readonly valid: boolean;
  /**
   * `agent` for an `.agent.md` agent file beside the flows (its id is its path, `.agent.md`
   * included): run it with `POST /api/runs` like a flow, its input the object of its inputs.
   * Absent for a flow.
   */
  readonly kind?: 'agent';
}

/** `GET /api/flows`. */
export interface FlowListResponse {
  readonly flows: readonly FlowSummary[];
}

/** `POST /api/validate`, and part of a save's answer. */
export interface ValidationResponse {
  readonly ok: boolean;
  readonly errors: readonly FlowDiagnostic[];
  readonly warnings: readonly FlowDiagnostic[];
}

/** `PUT /api/flows/:id`: saved (a flow with graph errors is saved too, and they are returned). */
export interface FlowSavedResponse {
  readonly id: string;
  readonly updatedAt: string;
  readonly validation: ValidationResponse;
}

/** `POST /api/runs`. */
export interface StartRunRequest {
  /** The id of a flow in the flows directory. */
  readonly flow: string;
  readonly input: unknown;
  /** Loads and saves this conversation's memory (the flow needs a memory.kv node). */
  readonly conversationId?: string;
  /** Ends the run as `timeout` after this long. */
  readonly timeoutMs?: number;
}

/** `POST /api/runs` → 201. */
export interface RunStartedResponse {
  readonly traceId: string;
  readonly flow: string;
}

/**
 * `POST /api/runs/:traceId/fork` (`schemas/http/fork-run-request.schema.json`): the options of
 * `forkRun`, the flow being the parent's as the server serves it.
 *
 * @example
 * ```ts
 * const request: ForkRunRequest = { at: 2, answers: { 2: { action: 'final', message: 'done', confidence: 1 } } };
 * ```
 */
export interface ForkRunRequest {
  readonly at: number;
  readonly model?: Record<string, unknown>;
  readonly prompt?: string;
  readonly answers?: Readonly<Record<string, unknown>>;
  readonly toolResults?: Readonly<Record<string, unknown>>;
}

/**
 * `POST /api/runs/:traceId/fork` → 201: the new run's trace id.
 *
 * @example
 * ```ts
 * const { traceId }: RunForkedResponse = await (await fetch(ApiRoute.forkRun(parent), { method: 'POST', body: '{"at":2}' })).json();
 * ```
 */
export interface RunForkedResponse {
  readonly traceId: string;
}

/** `GET /api/runs/:a/diff/:b` → 200 (the same JSON as `redflow diff --json`). */
export type { RunDiff } from '../machines/runDiff.js';

/** `POST /api/runs/:traceId/abort`. */
export interface AbortRunRequest {
  readonly reason?: string;
}

/** `POST /api/runs/:traceId/approval` (`schemas/http/approval-request.schema.json`). */
export interface ApprovalRequest {
  readonly decision: 'approve' | 'deny';
  /** Recorded with the decision; a denial's reason is shown to the model. */
  readonly reason?: string;
  /** When given, the decision is for this call only (409 `WAIT_ANSWER_MISMATCH` otherwise). */
  readonly idempotencyKey?: string;
  readonly iteration?: number;
}

/** `POST /api/runs/:traceId/answer` (`schemas/http/answer-request.schema.json`): a person's answer to the model's question. */
export interface AnswerRequest {
  readonly text: string;
  /** When given, the answer is for this question only (409 `WAIT_ANSWER_MISMATCH` otherwise). */
  readonly idempotencyKey?: string;
  readonly iteration?: number;
}

/** `POST /api/runs/:traceId/tool-results` (`schemas/http/tool-result-request.schema.json`): `output` when `ok`, else `error`. */
export type ToolResultRequest = {
  /** When given, the result is for this call only (409 `WAIT_ANSWER_MISMATCH` otherwise). */
  readonly idempotencyKey?: string;
  readonly iteration?: number;
} & ({ readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly error: { readonly message: string } });

/**
 * Where a run is: under way here, ended, waiting for an answer from outside (an approval, a client
 * tool's result: parked in its log, no process holds it), or neither (its log stops early:
 * `redflow resume` it).
 */
export type RunStatus = 'running' | 'finished' | 'waiting' | 'interrupted';

/** One run, as listed. */
export interface RunSummary {
  readonly traceId: string;
  readonly status: RunStatus;
  /** The flow id when the run was started from the flows directory. */
  readonly flow?: string;
  readonly startedAt: string;
  readonly iterations: number;
  readonly lastSeq: number;
  readonly outcome?: RunOutcome;
  /** With status `waiting`: what the run waits for (the call, its input) and until when. */
  readonly waiting?: RunWait;
}

/** `GET /api/runs`: newest first. `?flow=<id>` keeps one flow's runs; `?limit=<n>` (default 50). */
export interface RunListResponse {
  readonly runs: readonly RunSummary[];
}

/** `GET /api/runs/:traceId`. */
export interface RunResponse extends RunSummary {
  readonly envelope: AgentEnvelope;
}

/** `GET /api/runs/:traceId/events`. */
export interface RunEventsResponse {
  readonly traceId: string;
  readonly events: readonly AgentEvent[];
}

/** A flow as the API carries it (the flow file's JSON). */
export type FlowDocument = FlowDefinition;
