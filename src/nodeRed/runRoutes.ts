import { ErrorCode, RedflowError, toErrorInfo } from '../errors.js';
import { httpStatusOf } from '../errorKinds.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import type { RunSummary } from '../server/apiTypes.js';
import type { AgentHost } from './agentHostTypes.js';
import type { AdminHandler, NodeRedApi } from './nodeRedApi.js';

/** The longest a request for a run's events waits for a new one (`?wait=`). */
export const MAX_EVENTS_WAIT_MS = 25_000;

/** Runs `GET /redflow/runs` lists unless `?limit=` says otherwise, and at most. */
const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 1000;

/** A run as `GET /redflow/runs` lists it: the API's summary, with its agent node, `flow` its tab. */
export type AgentRunSummary = RunSummary & { readonly agent: string };

type Response = Parameters<AdminHandler>[1];

/**
 * Registers the admin routes through which Redflow's editor (`redflow serve --node-red`) runs the
 * agents of this Node-RED and follows their runs, each behind Node-RED's adminAuth (`flows.read` to
 * read, `flows.write` to start, abort or answer):
 *
 * - `POST /redflow/agents/:id/runs` `{ input, conversationId?, timeoutMs? }` → 201 `{ traceId, agent, flow }`
 *   once the run's first event is in its log (its answer leaves on the agent's first output);
 * - `GET /redflow/runs?limit=` → `{ runs }`, newest first, each a run summary with its agent;
 * - `GET /redflow/runs/:traceId/events?after=<seq>&wait=<ms>` → `{ traceId, agent, flow, running, events }`:
 *   the events after `after`, waiting up to `wait` ms (at most 25 s) for one while the run is under way;
 * - `POST /redflow/runs/:traceId/abort` `{ reason? }` → `{ answer: 'aborting' | 'finished' }`;
 * - `POST /redflow/runs/:traceId/answer` (a wait's answer: `{ kind: 'approval', approved, reason? }`,
 *   `{ kind: 'client', result }` or `{ kind: 'human', text }`, each with `idempotencyKey?`/`iteration?`)
 *   → 202 `{ answered: true }`.
 *
 * Errors are `{ error: { code, message, hint? } }`.
 */
export function registerRunRoutes(RED: NodeRedApi, hosts: ReadonlyMap<string, AgentHost>): void {
  const admin = RED.httpAdmin;
  if (admin === undefined) return;
  const allow: AdminHandler = (_req, _res, next) => next?.();
  const canRead = RED.auth?.needsPermission('flows.read') ?? allow;
  const canWrite = RED.auth?.needsPermission('flows.write') ?? allow;

  /** The agent that has run `traceId`, with the run's events after `afterSeq`. */
  const findRun = async (traceId: string, afterSeq: number) => {
    for (const [agent, host] of hosts) {
      const found = await host.events(traceId, afterSeq);
      if (found !== undefined) return { agent, host, ...found };
    }
    return undefined;
  };
  const tabOf = (host: AgentHost) => host.describe().tab;

  admin.post('/redflow/agents/:id/runs', canWrite, (req, res) => {
    void answer(res, async () => {
      const agent = req.params.id ?? '';
      const host = hosts.get(agent);
      if (host === undefined) throw notRunning(agent);
      const body = objectBody(req.body);
      if (!Object.hasOwn(body, 'input')) throw bodyError('send { "input": <the run\'s input>, "conversationId"?, "timeoutMs"? }');
      const { conversationId, timeoutMs } = body as { conversationId?: unknown; timeoutMs?: unknown };
      if (conversationId !== undefined && typeof conversationId !== 'string') throw bodyError('conversationId must be a string');
      if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) throw bodyError('timeoutMs must be a positive whole number');
      const { traceId } = await host.start({
        input: body.input,
        ...(conversationId !== undefined && { conversationId }),
        ...(timeoutMs !== undefined && { timeoutMs }),
      });
      const tab = tabOf(host);
      return [201, { traceId, agent, ...(tab !== undefined && { flow: tab }) }];
    });
  });

  admin.get('/redflow/runs', canRead, (req, res) => {
    void answer(res, async () => {
      const limit = queryNumber(req.query?.limit, 'limit', 1, MAX_LIST_LIMIT) ?? DEFAULT_LIST_LIMIT;
      const runs: AgentRunSummary[] = [];
      for (const [agent, host] of hosts) {
        const tab = tabOf(host);
        for (const run of await host.recentRuns(limit)) {
          runs.push({
            traceId: run.traceId,
            status: run.status,
            ...(tab !== undefined && { flow: tab }),
            startedAt: run.startedAt,
            iterations: run.iterations,
            lastSeq: run.lastSeq,
            ...(run.outcome !== undefined && { outcome: run.outcome }),
            ...(run.waiting !== undefined && { waiting: run.waiting }),
            agent,
          });
        }
      }
      runs.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
      return [200, { runs: runs.slice(0, limit) }];
    });
  });

  admin.get('/redflow/runs/:traceId/events', canRead, (req, res) => {
    void answer(res, async () => {
      const traceId = req.params.traceId ?? '';
      const afterSeq = queryNumber(req.query?.after, 'after', 0, Number.MAX_SAFE_INTEGER) ?? 0;
      const waitMs = queryNumber(req.query?.wait, 'wait', 0, MAX_EVENTS_WAIT_MS) ?? 0;
      let found = await findRun(traceId, afterSeq);
      if (found === undefined) throw runNotFound(traceId);
      if (found.events.length === 0 && found.running && waitMs > 0) {
        await found.host.waitForEvents(traceId, afterSeq, waitMs);
        found = (await findRun(traceId, afterSeq)) ?? found;
      }
      const tab = tabOf(found.host);
      return [200, { traceId, agent: found.agent, ...(tab !== undefined && { flow: tab }), running: found.running, events: found.events }];
    });
  });

  admin.post('/redflow/runs/:traceId/abort', canWrite, (req, res) => {
    void answer(res, async () => {
      const traceId = req.params.traceId ?? '';
      const { reason } = objectBody(req.body ?? {}) as { reason?: unknown };
      if (reason !== undefined && typeof reason !== 'string') throw bodyError('reason must be a string');
      const found = await findRun(traceId, Number.MAX_SAFE_INTEGER);
      if (found === undefined) throw runNotFound(traceId);
      const result = await found.host.abort(traceId, reason ?? 'aborted from Redflow\'s editor');
      if (result === 'unknown') throw runNotFound(traceId);
      return [200, { answer: result }];
    });
  });

  admin.post('/redflow/runs/:traceId/answer', canWrite, (req, res) => {
    void answer(res, async () => {
      const traceId = req.params.traceId ?? '';
      const given = parseAnswer(req.body);
      const found = await findRun(traceId, Number.MAX_SAFE_INTEGER);
      if (found === undefined || (await found.host.answer(traceId, given)) === 'unknown') throw runNotFound(traceId);
      return [202, { answered: true }];
    });
  });
}

/** Sends what `work` resolves with, or its error as `{ error }` with the status of its code (the API's: `httpStatusOf`). */
async function answer(res: Response, work: () => Promise<[number, unknown]>): Promise<void> {
  try {
    const [status, body] = await work();
    res.status(status).json(body);
  } catch (error) {
    const info = toErrorInfo(error, ErrorCode.HTTP_INTERNAL_ERROR);
    const status = error instanceof RedflowError ? httpStatusOf(info.code) : 500;
    res.status(status).json({ error: { code: info.code, message: info.message, ...(info.hint !== undefined && { hint: info.hint }) } });
  }
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bodyError('the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A wait's answer as the Redflow server sends it; what it must say about the wait is checked against the run's log. */
function parseAnswer(body: unknown): WaitAnswer {
  const given = objectBody(body);
  const target = {
    ...(typeof given.idempotencyKey === 'string' && { idempotencyKey: given.idempotencyKey }),
    ...(typeof given.iteration === 'number' && { iteration: given.iteration }),
  };
  switch (given.kind) {
    case 'approval':
      if (typeof given.approved !== 'boolean' || (given.reason !== undefined && typeof given.reason !== 'string')) throw bodyError('an approval is { "kind": "approval", "approved": true|false, "reason"? }');
      return { kind: 'approval', approved: given.approved, ...(typeof given.reason === 'string' && { reason: given.reason }), ...target };
    case 'client': {
      const result = given.result as { ok?: unknown } | undefined;
      if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean') throw bodyError('a client tool\'s result is { "kind": "client", "result": { "ok": true, "output" } | { "ok": false, "error" } }');
      return { kind: 'client', result: given.result as Extract<WaitAnswer, { kind: 'client' }>['result'], ...target };
    }
    case 'human':
      if (typeof given.text !== 'string') throw bodyError('a person\'s answer is { "kind": "human", "text": "…" }');
      return { kind: 'human', text: given.text, ...target };
    default:
      throw bodyError('"kind" must be approval, client or human (an abort goes to …/abort)');
  }
}

function queryNumber(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new RedflowError({ code: ErrorCode.HTTP_QUERY_INVALID, message: `${name} must be a whole number from ${min} to ${max}` });
  return n;
}

function bodyError(message: string): RedflowError {
  return new RedflowError({ code: ErrorCode.HTTP_BODY_INVALID, message });
}

function runNotFound(traceId: string): RedflowError {
  return new RedflowError({ code: ErrorCode.RUN_NOT_FOUND, message: `no agent of this Node-RED has a run ${traceId.slice(0, 80)}`, hint: 'GET /redflow/runs lists the runs' });
}

function notRunning(agent: string): RedflowError {
  return new RedflowError({
    code: ErrorCode.NODE_RED_AGENT_NOT_RUNNING,
    message: `no agent ${agent.slice(0, 80)} runs in this Node-RED`,
    hint: 'deploy the flow (with node-red-contrib-redflow installed), then run it again',
  });
}
