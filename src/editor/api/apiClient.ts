/**
 * The editor's client of the `redflow serve` API. Routes and bodies come from
 * `src/server/apiTypes.ts` (shared with the server, not copied). Requests carry the bearer token
 * once the user has entered one: an answer 401 asks for it (through `requestToken`) and the
 * request is sent again once.
 */
import type { ErrorInfo } from '../../errors.js';
import type { AgentEvent } from '../../events/eventTypes.js';
import {
  ApiRoute,
  type AnswerRequest,
  type ApiErrorBody,
  type ApprovalRequest,
  type FlowDocument,
  type FlowListResponse,
  type FlowSavedResponse,
  type ForkRunRequest,
  type RunDiff,
  type RunEventsResponse,
  type RunForkedResponse,
  type RunListResponse,
  type RunResponse,
  type RunStartedResponse,
  type StartRunRequest,
  type ToolResultRequest,
  type ValidationResponse,
} from '../../server/apiTypes.js';

/** An API answer that is not 2xx, with the API's error (code, message, hint). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly info: ErrorInfo | undefined,
  ) {
    super(info ? `${info.code}: ${info.message}` : `HTTP ${status}`);
  }
}

/** How the client gets and asks for the bearer token. */
export interface ApiClientOptions {
  /** Prefix of every route (the page's origin by default). */
  readonly baseUrl?: string;
  readonly getToken: () => string | undefined;
  /** Asks the user for a token after a 401; resolves with it, or `undefined` when they give up. */
  readonly requestToken: () => Promise<string | undefined>;
}

/** The API, one method per route. */
export interface ApiClient {
  listFlows(): Promise<FlowListResponse>;
  getFlow(id: string): Promise<FlowDocument>;
  saveFlow(id: string, flow: FlowDocument): Promise<FlowSavedResponse>;
  /** Deletes the flow's file (its runs' logs stay). */
  deleteFlow(id: string): Promise<void>;
  validate(flow: FlowDocument): Promise<ValidationResponse>;
  /** The runs, newest first: only `flow`'s when given. */
  listRuns(flow?: string): Promise<RunListResponse>;
  getRun(traceId: string): Promise<RunResponse>;
  runEvents(traceId: string): Promise<readonly AgentEvent[]>;
  startRun(request: StartRunRequest): Promise<RunStartedResponse>;
  abortRun(traceId: string, reason?: string): Promise<RunResponse>;
  /** Approves or denies the call a waiting run waits on (`POST /api/runs/:traceId/approval`). */
  answerApproval(traceId: string, request: ApprovalRequest): Promise<RunResponse>;
  /** Answers the question a waiting run asks a person (`POST /api/runs/:traceId/answer`). */
  answerQuestion(traceId: string, request: AnswerRequest): Promise<RunResponse>;
  /** Gives the result of the client tool a waiting run waits for (`POST /api/runs/:traceId/tool-results`). */
  sendToolResult(traceId: string, request: ToolResultRequest): Promise<RunResponse>;
  /** Starts a fork of a run that is not under way (`POST /api/runs/:traceId/fork`). */
  forkRun(traceId: string, request: ForkRunRequest): Promise<RunForkedResponse>;
  /** Run `a` and run `b` compared iteration by iteration (`GET /api/runs/:a/diff/:b`). */
  diffRuns(a: string, b: string): Promise<RunDiff>;
  /** The URL of the run's event stream (with `?token=`, since EventSource cannot send headers). */
  streamUrl(traceId: string): string;
}

/**
 * Creates the client.
 *
 * @example
 * ```ts
 * const api = createApiClient({ getToken: loadToken, requestToken: askUser });
 * const { flows } = await api.listFlows();
 * ```
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.baseUrl ?? '';

  async function send<T>(method: string, route: string, body?: unknown, retried = false): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = options.getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(base + route, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    if (response.status === 401 && !retried) {
      const entered = await options.requestToken();
      if (entered !== undefined) return send<T>(method, route, body, true);
    }
    const text = await response.text();
    const parsed: unknown = text === '' ? undefined : safeParse(text);
    if (!response.ok) throw new ApiError(response.status, (parsed as ApiErrorBody | undefined)?.error);
    return parsed as T;
  }

  return {
    listFlows: () => send('GET', ApiRoute.flows),
    getFlow: (id) => send('GET', ApiRoute.flow(id)),
    saveFlow: (id, flow) => send('PUT', ApiRoute.flow(id), flow),
    deleteFlow: (id) => send('DELETE', ApiRoute.flow(id)),
    validate: (flow) => send('POST', ApiRoute.validate, flow),
    listRuns: (flow) => send('GET', flow === undefined ? ApiRoute.runs : `${ApiRoute.runs}?${new URLSearchParams({ flow }).toString()}`),
    getRun: (traceId) => send('GET', ApiRoute.run(traceId)),
    runEvents: async (traceId) => (await send<RunEventsResponse>('GET', ApiRoute.runEvents(traceId))).events,
    startRun: (request) => send('POST', ApiRoute.runs, request),
    abortRun: (traceId, reason) => send('POST', ApiRoute.abortRun(traceId), reason === undefined ? {} : { reason }),
    answerApproval: (traceId, request) => send('POST', ApiRoute.runApproval(traceId), request),
    answerQuestion: (traceId, request) => send('POST', ApiRoute.runAnswer(traceId), request),
    sendToolResult: (traceId, request) => send('POST', ApiRoute.runToolResults(traceId), request),
    forkRun: (traceId, request) => send('POST', ApiRoute.forkRun(traceId), request),
    diffRuns: (a, b) => send('GET', ApiRoute.diffRuns(a, b)),
    streamUrl: (traceId) => {
      const token = options.getToken();
      return `${base}${ApiRoute.runStream(traceId)}${token ? `?token=${encodeURIComponent(token)}` : ''}`;
    },
  };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
