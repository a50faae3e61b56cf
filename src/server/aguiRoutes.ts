import type { IncomingMessage, ServerResponse } from 'node:http';
import { pendingWait } from '../events/pendingWait.js';
import { isValidTraceId } from '../runtime/ids.js';
import { abortsOnDisconnect, invalid, readAguiRequest, type AguiRunInput } from './aguiInput.js';
import { streamAgui, type EncodeSse } from './aguiStream.js';
import { parseFlowId } from './flowIds.js';
import type { FlowStore } from './flowStore.js';
import { readJsonBody } from './requestBody.js';
import type { RunBackend } from './runBackend.js';
import { runNotFound } from './runStream.js';

/**
 * The AG-UI endpoints of `redflow serve` (docs/ag-ui.md): `POST /api/flows/<id>/ag-ui` takes a
 * RunAgentInput and streams the run it starts or answers; `GET /api/runs/<traceId>/ag-ui` streams
 * an existing run. Runs start and are answered through the run backend, as every API route does.
 * The AG-UI packages are loaded on the first request, not with the server.
 */

/** The last path segment of the AG-UI route of a flow: `POST /api/flows/<id>/ag-ui`. */
export const AGUI_SEGMENT = 'ag-ui';

/** What the AG-UI routes work with. */
export interface AguiContext {
  readonly flows: FlowStore;
  readonly backend: RunBackend;
  readonly maxBodyBytes: number;
  readonly keepAliveMs?: number;
}

/** What the AG-UI routes need of a request. */
export interface AguiRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: URLSearchParams;
}

interface AguiLibraries {
  readonly parseInput: (body: unknown) => { success: true; data: AguiRunInput } | { success: false; problems: string };
  readonly encode: EncodeSse;
}

let libraries: Promise<AguiLibraries> | undefined;

/** `@ag-ui/core`'s schema and `@ag-ui/encoder`'s encoder, imported once, on first use. */
function aguiLibraries(): Promise<AguiLibraries> {
  libraries ??= (async () => {
    const [{ RunAgentInputSchema }, { EventEncoder }] = await Promise.all([import('@ag-ui/core/schemas'), import('@ag-ui/encoder')]);
    const encoder = new EventEncoder();
    return {
      parseInput(body) {
        const parsed = RunAgentInputSchema.safeParse(body);
        if (parsed.success) return { success: true, data: parsed.data as AguiRunInput };
        // zod's list of what does not match, each with its path: the first five are enough to fix the body.
        const wrong = parsed.error.issues.slice(0, 5).map((each) => `${each.path.length === 0 ? '(the body)' : `/${each.path.join('/')}`}: ${each.message}`);
        return { success: false, problems: wrong.join('; ') };
      },
      encode: (event) => encoder.encodeSSE(event as Parameters<typeof encoder.encodeSSE>[0]),
    };
  })();
  return libraries;
}

/**
 * `POST /api/flows/<id>/ag-ui` (`flowPath` is the path's rest after `/api/flows/`): starts a run of
 * the flow from the input's last user message, or answers the wait of one of its runs (a resume
 * entry, a frontend tool's result), and streams the run as AG-UI events until it ends or waits.
 *
 * @throws ApiError AGUI_INPUT_INVALID (400) for an input that is not a RunAgentInput Redflow can take.
 *
 * @example
 * ```ts
 * route('POST', '/api/flows/*rest', ({ req, res, params, query }) => postAgui(context, { req, res, query }, params.rest ?? ''));
 * ```
 */
export async function postAgui(context: AguiContext, { req, res }: AguiRequest, flowPath: string): Promise<void> {
  const flowId = parseFlowId(flowPath.slice(0, -`/${AGUI_SEGMENT}`.length));
  const body = await readJsonBody(req, { maxBytes: context.maxBodyBytes });
  const { parseInput, encode } = await aguiLibraries();
  const parsed = parseInput(body);
  if (!parsed.success) throw invalid(`the body is not an AG-UI RunAgentInput: ${parsed.problems}`, 'send threadId, runId and messages (the last a user message), as @ag-ui/client does');
  const input = parsed.data;
  const request = readAguiRequest(input);
  const stream = { threadId: input.threadId, runId: input.runId, abortOnDisconnect: abortsOnDisconnect(input), ...(context.keepAliveMs !== undefined && { keepAliveMs: context.keepAliveMs }) };
  if (request.kind === 'start') {
    const { flowPath: file, flow } = await context.flows.runnable(flowId);
    const { traceId } = await context.backend.start({ flowId, flowPath: file, flow: flow.definition, input: request.input });
    return streamAgui(res, context.backend, encode, { ...stream, traceId, afterSeq: 0 });
  }
  const run = isValidTraceId(request.traceId) ? await context.backend.get(request.traceId) : undefined;
  if (run === undefined) throw runNotFound(request.traceId);
  if (run.flow !== undefined && run.flow !== flowId) throw invalid(`run ${request.traceId} is a run of ${run.flow}, not of ${flowId}`, `answer it at /api/flows/${run.flow}/ag-ui`);
  // The wait as the log has it: the run may still be letting go of it (not yet listed as waiting).
  const logged = (await context.backend.events(request.traceId, 0)) ?? [];
  const answer = request.answer(pendingWait(logged));
  if (answer.kind === 'abort') await context.backend.abort(request.traceId, answer.reason);
  else if ((await context.backend.answer(request.traceId, answer)) === 'unknown') throw runNotFound(request.traceId);
  // The stream goes on from where the run waited: what came before was the previous AG-UI run's.
  return streamAgui(res, context.backend, encode, { ...stream, traceId: request.traceId, afterSeq: Math.max(run.lastSeq, logged.at(-1)?.seq ?? 0) });
}

/**
 * `GET /api/runs/<traceId>/ag-ui`: the run as AG-UI events, from its log, then live, until it ends
 * or waits; after `Last-Event-ID` or `?after=<seq>` when given. `?threadId=` and `?runId=` name
 * the AG-UI run (both default to the trace id). Leaving this stream never aborts the run.
 *
 * @example
 * ```ts
 * route('GET', '/api/runs/:traceId/ag-ui', ({ req, res, params, query }) => getAgui(context, { req, res, query }, params.traceId ?? '', 0));
 * ```
 */
export async function getAgui(context: AguiContext, { res, query }: AguiRequest, traceId: string, afterSeq: number): Promise<void> {
  if (!isValidTraceId(traceId)) throw runNotFound(traceId);
  const { encode } = await aguiLibraries();
  await streamAgui(res, context.backend, encode, {
    traceId,
    threadId: query.get('threadId') ?? traceId,
    runId: query.get('runId') ?? traceId,
    afterSeq,
    abortOnDisconnect: false,
    ...(context.keepAliveMs !== undefined && { keepAliveMs: context.keepAliveMs }),
  });
}
