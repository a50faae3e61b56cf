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
  /** GET → {@link RunListResponse}; POST ({@link StartRunRequest}) → 201 {@link RunStartedResponse}. */
  runs: '/api/runs',
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
} as const;

/** The SSE event names of {@link ApiRoute.runStream}. */
export const StreamEvent = {
  AgentEvent: 'agent-event',
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
}

/** `GET /api/health`. */
export interface HealthResponse {
  readonly ok: true;
  readonly version: string;
  /** Where runs run: in the server's process, or on a NATS cluster of workers. */
  readonly mode: 'embedded' | 'nats';
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

/** `POST /api/runs/:traceId/abort`. */
export interface AbortRunRequest {
  readonly reason?: string;
}

/** Where a run is: under way here, ended, or neither (its log stops early: `redflow resume` it). */
export type RunStatus = 'running' | 'finished' | 'interrupted';

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
