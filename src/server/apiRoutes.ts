import type { IncomingMessage, ServerResponse } from 'node:http';
import { validators } from '../contracts/schemas.js';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { MAX_FLOW_FILE_BYTES } from '../flows/loadFlow.js';
import type { FlowValidation } from '../flows/validateFlow.js';
import { environmentWarnings } from '../flows/environmentWarnings.js';
import { isValidTraceId } from '../runtime/ids.js';
import {
  ApiRoute,
  type FlowDocument,
  type FlowListResponse,
  type FlowSavedResponse,
  type HealthResponse,
  type RunEventsResponse,
  type RunForkedResponse,
  type RunListResponse,
  type RunStartedResponse,
  type ValidationResponse,
} from './apiTypes.js';
import { withPathId } from './flowDocumentId.js';
import { parseFlowId } from './flowIds.js';
import type { FlowStore } from './flowStore.js';
import { readJsonBody } from './requestBody.js';
import { parseAbortRunRequest, parseAnswerRequest, parseForkRunRequest, parseApprovalRequest, parseStartRunRequest, parseToolResultRequest } from './requestSchemas.js';
import { answerOfApproval, answerOfHuman, answerOfToolResult } from './waitAnswers.js';
import { sendJson, sendNoContent } from './respond.js';
import type { Route, RouteParams } from './router.js';
import { isAgentId, startAgentRun } from './agentRuns.js';
import type { RunBackend } from './runBackend.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import { runNotFound, streamRun } from './runStream.js';
import { parseReactStepRequest } from '../stepService/parseReactStepRequest.js';
import { holdStepKey } from '../stepService/stepKey.js';
import { publicErrorInfo } from './publicText.js';
import { AGUI_SEGMENT, getAgui, postAgui } from './aguiRoutes.js';
import type { StepService } from '../stepService/reactStepService.js';
import { diffOfRuns, forkOfRun } from './forkRoutes.js';

/** What the API's routes work with. */
export interface ApiContext {
  readonly flows: FlowStore;
  readonly backend: RunBackend;
  readonly version: string;
  /** True when runs feed the Stately inspector. */
  readonly inspect: boolean;
  /** The largest body of a route that takes no flow. */
  readonly maxBodyBytes: number;
  /** How often an idle SSE stream gets a keepalive comment. */
  readonly keepAliveMs?: number;
  /**
   * The environment runs see when they run in this process, for the `ENV_NOT_SET` warnings of
   * validate and save; absent when they run elsewhere (a cluster's workers have their own).
   */
  readonly runEnv?: NodeJS.ProcessEnv;
  /** The step service of `POST /api/agent/react_step`. */
  readonly steps?: StepService;
  /** The server's own log (stderr): the full text of an error a client is shown without internals. */
  readonly logError?: (line: string) => void;
}

/** The largest step request: a session's history and context travel with every step. */
export const MAX_STEP_BODY_BYTES = 4 * 1024 * 1024;

/** One request, matched to its route. */
export interface RouteRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: RouteParams;
  readonly query: URLSearchParams;
}

/** What answers a route, and whether it takes the token as `?token=` (the SSE stream only). */
export interface RouteHandler {
  readonly run: (request: RouteRequest) => Promise<void>;
  readonly queryToken: boolean;
}

/** How many runs a list shows unless `?limit=` says otherwise, and at most. */
const DEFAULT_RUN_LIMIT = 50;
const MAX_RUN_LIMIT = 1000;

/**
 * The API's routes (the contract is apiTypes.ts): flows, validation, runs, and the run stream.
 *
 * @example
 * ```ts
 * const router = createRouter(apiRoutes({ flows, backend, version: '0.1.0', inspect: false, maxBodyBytes: 1 << 20 }));
 * ```
 */
export function apiRoutes(context: ApiContext): Route<RouteHandler>[] {
  const { flows, backend } = context;
  const route = (method: Route<RouteHandler>['method'], pattern: string, run: RouteHandler['run'], queryToken = false): Route<RouteHandler> => ({
    method,
    pattern,
    handler: { run, queryToken },
  });

  return [
    route('GET', ApiRoute.health, async ({ res }) => {
      const body: HealthResponse = { ok: true, version: context.version, mode: backend.mode, inspect: context.inspect };
      sendJson(res, 200, body);
    }),

    route('GET', ApiRoute.flows, async ({ res }) => {
      const body: FlowListResponse = { flows: await flows.list() };
      sendJson(res, 200, body);
    }),

    route('GET', `${ApiRoute.flows}/*id`, async ({ res, params }) => {
      const { text, updatedAt } = await flows.read(parseFlowId(params.id ?? ''));
      // The file as it is (its formatting too): what the editor opens is what is on disk.
      res.writeHead(200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(text),
        'Cache-Control': 'no-store',
        'Last-Modified': new Date(updatedAt).toUTCString(),
      });
      res.end(text);
    }),

    route('PUT', `${ApiRoute.flows}/*id`, async ({ req, res, params }) => {
      const id = parseFlowId(params.id ?? '');
      const body = withPathId(await readJsonBody(req, { maxBytes: MAX_FLOW_FILE_BYTES }), id);
      const validation = await withEnvironmentWarnings(await flows.validate(body, id), context);
      // Graph errors do not stop a save (a flow is saved half-built, and fixed later); a body
      // that is not a flow at all does.
      if (!validators.flow(body)) {
        throw new ApiError(
          errorInfo(ErrorCode.HTTP_BODY_INVALID, 'the body is not a flow: it does not match schemas/flow.schema.json', {
            hint: 'a flow is an object with "nodes" and "edges" arrays; see the diagnostics for what is wrong',
          }),
          { diagnostics: validation.ok ? [] : validation.errors },
        );
      }
      const saved = await flows.save(id, body as FlowDocument);
      const response: FlowSavedResponse = { id, updatedAt: saved.updatedAt, validation: validationResponse(validation) };
      sendJson(res, saved.created ? 201 : 200, response, saved.created ? { Location: ApiRoute.flow(id) } : {});
    }),

    // A flow id may hold `/`, so the AG-UI route of a flow is the flow's path plus a last segment.
    route('POST', `${ApiRoute.flows}/*path`, async ({ req, res, params, query }) => {
      const rest = params.path ?? '';
      if (!rest.endsWith(`/${AGUI_SEGMENT}`)) {
        throw new ApiError(errorInfo(ErrorCode.HTTP_METHOD_NOT_ALLOWED, `POST is allowed on ${ApiRoute.flows}/<id>/${AGUI_SEGMENT} only; use GET, PUT or DELETE on a flow`), {
          headers: { Allow: 'GET, PUT, DELETE' },
        });
      }
      await postAgui(context, { req, res, query }, rest);
    }),

    route('GET', `${ApiRoute.runs}/:traceId/${AGUI_SEGMENT}`, async ({ req, res, params, query }) => {
      await getAgui(context, { req, res, query }, params.traceId ?? '', cursorOf(req.headers['last-event-id'], query));
    }, true),

    route('DELETE', `${ApiRoute.flows}/*id`, async ({ res, params }) => {
      await flows.remove(parseFlowId(params.id ?? ''));
      sendNoContent(res);
    }),

    route('POST', ApiRoute.validate, async ({ req, res }) => {
      const body = await readJsonBody(req, { maxBytes: MAX_FLOW_FILE_BYTES });
      sendJson(res, 200, validationResponse(await withEnvironmentWarnings(await flows.validate(body), context)));
    }),

    route('GET', ApiRoute.runs, async ({ res, query }) => {
      const flow = query.get('flow');
      const limit = count(query.get('limit'), 'limit', 1, MAX_RUN_LIMIT) ?? DEFAULT_RUN_LIMIT;
      const body: RunListResponse = { runs: await backend.list({ limit, ...(flow !== null && { flow: parseFlowId(flow) }) }) };
      sendJson(res, 200, body);
    }),

    route('POST', ApiRoute.runs, async ({ req, res }) => {
      const request = parseStartRunRequest(await readJsonBody(req, { maxBytes: context.maxBodyBytes }));
      const flowId = parseFlowId(request.flow);
      if (isAgentId(flowId)) return sendJson(res, ...(await startAgentRun(context, flowId, request.input)));
      const { flowPath, flow } = await flows.runnable(flowId);
      const { traceId } = await backend.start({
        flowId,
        flowPath,
        flow: flow.definition,
        input: request.input,
        ...(request.conversationId !== undefined && { conversationId: request.conversationId }),
        ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
      });
      const body: RunStartedResponse = { traceId, flow: flowId };
      sendJson(res, 201, body, { Location: ApiRoute.run(traceId) });
    }),

    route('GET', `${ApiRoute.runs}/:traceId`, async ({ res, params }) => {
      const traceId = params.traceId ?? '';
      const run = isValidTraceId(traceId) ? await backend.get(traceId) : undefined;
      if (!run) throw runNotFound(traceId);
      sendJson(res, 200, run);
    }),

    route('GET', `${ApiRoute.runs}/:traceId/events`, async ({ res, params, query }) => {
      const traceId = params.traceId ?? '';
      const afterSeq = count(query.get('after'), 'after', 0) ?? 0;
      const events = isValidTraceId(traceId) ? await backend.events(traceId, afterSeq) : undefined;
      if (!events) throw runNotFound(traceId);
      const body: RunEventsResponse = { traceId, events };
      sendJson(res, 200, body);
    }),

    route(
      'GET',
      `${ApiRoute.runs}/:traceId/stream`,
      async ({ req, res, params, query }) => {
        const traceId = params.traceId ?? '';
        if (!isValidTraceId(traceId)) throw runNotFound(traceId);
        // A reconnecting EventSource sends Last-Event-ID and the URL it first used: the header is newer.
        const afterSeq = cursorOf(req.headers['last-event-id'], query);
        // ?activity=1 adds the run's activity (turn_start … turn_end, error) to the events and pieces.
        const activity = count(query.get('activity'), 'activity', 0, 1) === 1;
        await streamRun(res, backend, traceId, afterSeq, { activity, ...(context.keepAliveMs !== undefined && { keepAliveMs: context.keepAliveMs }) });
      },
      true,
    ),

    route('POST', `${ApiRoute.runs}/:traceId/abort`, async ({ req, res, params }) => {
      const traceId = params.traceId ?? '';
      const body = await readJsonBody(req, { maxBytes: context.maxBodyBytes, optional: true });
      const { reason } = body === undefined ? {} : parseAbortRunRequest(body);
      const answer = isValidTraceId(traceId) ? await backend.abort(traceId, reason) : 'unknown';
      if (answer === 'unknown') throw runNotFound(traceId);
      const run = await backend.get(traceId);
      if (!run) throw runNotFound(traceId);
      if (answer === 'finished') {
        throw new ApiError(
          errorInfo(
            ErrorCode.RUN_ALREADY_FINISHED,
            run.status === 'interrupted'
              ? `run ${traceId} is not under way here (its log stops early): there is nothing to abort`
              : `run ${traceId} has already ended (${run.outcome?.status ?? 'finished'}, ${run.outcome?.reason ?? 'no outcome'})`,
            run.status === 'interrupted' ? { hint: '`redflow resume` continues an interrupted run' } : {},
          ),
        );
      }
      sendJson(res, 202, run);
    }),

    route('POST', `${ApiRoute.runs}/:traceId/fork`, async ({ req, res, params }) => {
      const request = parseForkRunRequest(await readJsonBody(req, { maxBytes: context.maxBodyBytes }));
      const traceId = await forkOfRun(backend, params.traceId ?? '', request);
      const body: RunForkedResponse = { traceId };
      sendJson(res, 201, body, { Location: ApiRoute.run(traceId) });
    }),

    route('GET', `${ApiRoute.runs}/:a/diff/:b`, async ({ res, params }) => {
      sendJson(res, 200, await diffOfRuns(backend, params.a ?? '', params.b ?? ''));
    }),

    route('POST', ApiRoute.reactStep, async ({ req, res }) => {
      // The key is a secret of this request's scope only (the server runs each request in one).
      const body = await readJsonBody(req, { maxBytes: MAX_STEP_BODY_BYTES });
      const request = parseReactStepRequest(holdStepKey(body, { servesLocally: (name) => context.steps?.servesLocally(name) === true }).body);
      if (context.steps === undefined) throw new ApiError(errorInfo(ErrorCode.HTTP_NOT_FOUND, 'this server has no step service'));
      const answer = await context.steps.step(request);
      if (answer.error === undefined) return sendJson(res, 200, answer);
      // A failed step (the model's error) is an answer: shown like a thrown error, without the
      // model server's address or the server's paths, which go to the server's log only.
      const shown = publicErrorInfo(answer.error);
      if (shown.withheld) context.logError?.(`step of ${answer.trace_id ?? answer.session_id}: ${answer.error.code}: ${answer.error.message}${answer.error.hint === undefined ? '' : ` (${answer.error.hint})`}`);
      sendJson(res, 200, { ...answer, error: shown.info });
    }),

    route('POST', `${ApiRoute.runs}/:traceId/approval`, async ({ req, res, params }) => {
      const traceId = params.traceId ?? '';
      const answer = answerOfApproval(parseApprovalRequest(await readJsonBody(req, { maxBytes: context.maxBodyBytes })));
      await answerRun(res, backend, traceId, answer);
    }),

    route('POST', `${ApiRoute.runs}/:traceId/tool-results`, async ({ req, res, params }) => {
      const traceId = params.traceId ?? '';
      const answer = answerOfToolResult(parseToolResultRequest(await readJsonBody(req, { maxBytes: context.maxBodyBytes })));
      await answerRun(res, backend, traceId, answer);
    }),

    route('POST', `${ApiRoute.runs}/:traceId/answer`, async ({ req, res, params }) => {
      const traceId = params.traceId ?? '';
      const answer = answerOfHuman(parseAnswerRequest(await readJsonBody(req, { maxBytes: context.maxBodyBytes })));
      await answerRun(res, backend, traceId, answer);
    }),
  ];
}

/** Hands a waiting run its answer and answers 202 with the run as it goes on (404 for no such run; 409 refusals as the backend throws them). */
async function answerRun(res: RouteRequest['res'], backend: RunBackend, traceId: string, answer: WaitAnswer): Promise<void> {
  const answered = isValidTraceId(traceId) ? await backend.answer(traceId, answer) : 'unknown';
  if (answered === 'unknown') throw runNotFound(traceId);
  const run = await backend.get(traceId);
  if (!run) throw runNotFound(traceId);
  sendJson(res, 202, run);
}

/** A valid flow's validation, warned about what runs here would miss in their environment. */
async function withEnvironmentWarnings(validation: FlowValidation, context: Pick<ApiContext, 'runEnv'>): Promise<FlowValidation> {
  if (!validation.ok || context.runEnv === undefined) return validation;
  return { ...validation, warnings: [...validation.warnings, ...environmentWarnings(validation.flow, context.runEnv)] };
}

function validationResponse(validation: FlowValidation): ValidationResponse {
  return { ok: validation.ok, errors: validation.ok ? [] : validation.errors, warnings: validation.warnings };
}

/** Where a stream resumes: after `Last-Event-ID` (a reconnecting EventSource's, newer than its URL), else `?after=`, else from the start. */
function cursorOf(lastEventId: string | string[] | undefined, query: URLSearchParams): number {
  return (
    (typeof lastEventId === 'string' && lastEventId.trim() !== '' ? count(lastEventId.trim(), 'Last-Event-ID', 0) : undefined) ??
    count(query.get('after'), 'after', 0) ??
    0
  );
}

/** A whole number from a query parameter or header, `undefined` when absent; 400 when not one in range. */
function count(value: string | null | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ApiError(
      errorInfo(ErrorCode.HTTP_QUERY_INVALID, `${name} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, not ${JSON.stringify(value.slice(0, 40))}`),
    );
  }
  return n;
}
