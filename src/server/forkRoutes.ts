import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { isValidTraceId } from '../runtime/ids.js';
import type { ForkRunRequest, RunDiff } from './apiTypes.js';
import type { RunBackend } from './runBackend.js';
import { runNotFound } from './runStream.js';

/** `{ "3": … }` as the numbers forkRun takes. */
function byIteration(values: Readonly<Record<string, unknown>> | undefined): Record<number, unknown> | undefined {
  return values === undefined ? undefined : Object.fromEntries(Object.entries(values).map(([key, value]) => [Number(key), value]));
}

/**
 * Starts a fork of a run of the backend (`POST /api/runs/:traceId/fork`) and gives its trace id.
 * The fork errors (`FORK_POINT_OUT_OF_RANGE`, `FORK_RUN_STILL_RUNNING`, `FORK_PREFIX_INCOMPATIBLE`)
 * are thrown as they are, and answered with their kind's status like every other code.
 *
 * @example
 * ```ts
 * const fork = await forkOfRun(backend, parentTraceId, { at: 2 });
 * ```
 */
export async function forkOfRun(backend: RunBackend, parent: string, request: ForkRunRequest): Promise<string> {
  if (backend.fork === undefined) {
    throw new ApiError(
      errorInfo(ErrorCode.HTTP_NOT_FOUND, `this server's runs (${backend.mode}) cannot be forked here`, {
        hint: 'fork runs on a server with embedded runs (redflow serve --flows <dir>) or on a cluster (redflow serve --nats <url>), or with `redflow fork` on the run\'s log',
      }),
    );
  }
  const answers = byIteration(request.answers);
  const toolResults = byIteration(request.toolResults);
  const forked = isValidTraceId(parent)
    ? await backend.fork({
        parent,
        at: request.at,
        ...(request.model !== undefined && { model: request.model }),
        ...(request.prompt !== undefined && { prompt: request.prompt }),
        ...(answers !== undefined && { answers }),
        ...(toolResults !== undefined && { toolResults }),
      })
    : undefined;
  if (forked === undefined) throw runNotFound(parent);
  return forked.traceId;
}

/**
 * Two runs of the backend compared iteration by iteration (`GET /api/runs/:a/diff/:b`): the JSON
 * of `redflow diff --json`. The comparison is loaded on first use.
 *
 * @example
 * ```ts
 * const diff = await diffOfRuns(backend, parentTraceId, forkTraceId);
 * console.log(diff.first?.iteration);
 * ```
 */
export async function diffOfRuns(backend: RunBackend, a: string, b: string): Promise<RunDiff> {
  const eventsA = isValidTraceId(a) ? await backend.events(a, 0) : undefined;
  if (eventsA === undefined) throw runNotFound(a);
  const eventsB = isValidTraceId(b) ? await backend.events(b, 0) : undefined;
  if (eventsB === undefined) throw runNotFound(b);
  const { diffRuns } = await import('../machines/runDiff.js');
  return diffRuns(eventsA, eventsB);
}
