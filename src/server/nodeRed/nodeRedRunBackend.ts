import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { isTerminal, type AgentEvent } from '../../events/eventTypes.js';
import { pendingWait } from '../../events/pendingWait.js';
import { NodeType } from '../../flows/nodeTypes.js';
import { isValidTraceId } from '../../runtime/ids.js';
import type { RunSummary } from '../apiTypes.js';
import type { AbortAnswer, RunBackend } from '../runBackend.js';
import { runResponse } from '../runSummary.js';
import type { NodeRedAdmin } from './nodeRedAdmin.js';

/** Options of {@link createNodeRedRunBackend}. */
export interface NodeRedRunBackendOptions {
  readonly admin: NodeRedAdmin;
  /** How long one request for a run's events waits for a new one (default 20 s; Node-RED takes at most 25). */
  readonly pollWaitMs?: number;
  /** How often a run parked in a wait is looked at again for the events of its answer (default 1 s). */
  readonly parkedPollMs?: number;
  /** How long a start keeps asking while the agent is not running yet (a deploy under way; default 5 s). */
  readonly startPatienceMs?: number;
}

/** What `GET /redflow/runs/:traceId/events` answers. */
interface EventsAnswer {
  readonly events: AgentEvent[];
  readonly running: boolean;
  readonly flow?: string;
}

/**
 * The `redflow serve --node-red` backend: runs run inside Node-RED, in the agent node of the
 * flow's tab, through the Redflow nodes' admin routes (see `src/nodeRed/runRoutes.ts`). Their logs
 * are the agent's (JSONL under Node-RED's user directory, or JetStream): `get` and `events` read
 * them through Node-RED; `follow` asks for the events after the last one it has, each request
 * waiting in Node-RED for the next one, so the editor follows a run live as it follows an
 * embedded one (each event once, in order); a run parked in a wait is looked at again every
 * `parkedPollMs` for the events its answer brings. `answer` hands a parked run its answer in
 * Node-RED, which resumes it there.
 *
 * @example
 * ```ts
 * const backend = createNodeRedRunBackend({ admin: nodeRedAdmin({ url: 'http://127.0.0.1:1880' }) });
 * ```
 */
export function createNodeRedRunBackend(options: NodeRedRunBackendOptions): RunBackend {
  const { admin } = options;
  const pollWaitMs = options.pollWaitMs ?? 20_000;
  const parkedPollMs = options.parkedPollMs ?? 1000;
  const startPatienceMs = options.startPatienceMs ?? 5000;
  const followers = new Set<AbortController>();
  let closing = false;

  /** The run's events after `afterSeq` (waiting up to `waitMs` for one), or `undefined` for a run no agent has. */
  const eventsOf = async (traceId: string, afterSeq: number, waitMs = 0, signal?: AbortSignal): Promise<EventsAnswer | undefined> => {
    if (!isValidTraceId(traceId)) return undefined;
    try {
      return await admin.redflow<EventsAnswer>('GET', `/runs/${encodeURIComponent(traceId)}/events?after=${afterSeq}&wait=${waitMs}`, undefined, {
        ...(signal !== undefined && { signal }),
        timeoutMs: waitMs + 30_000,
      });
    } catch (error) {
      if (error instanceof RedflowError && error.code === ErrorCode.RUN_NOT_FOUND) return undefined;
      throw error;
    }
  };

  const abort = async (traceId: string, reason?: string): Promise<AbortAnswer> => {
    if (!isValidTraceId(traceId)) return 'unknown';
    try {
      const { answer } = await admin.redflow<{ answer: 'aborting' | 'finished' }>('POST', `/runs/${encodeURIComponent(traceId)}/abort`, reason === undefined ? {} : { reason });
      return answer;
    } catch (error) {
      if (error instanceof RedflowError && error.code === ErrorCode.RUN_NOT_FOUND) return 'unknown';
      throw error;
    }
  };

  return {
    mode: 'node-red',

    async start(request) {
      if (closing) throw new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the server is shutting down and starts no new run'));
      if (request.traceId !== undefined) {
        throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, 'a Node-RED agent chooses its runs\' trace ids: it cannot start one with a given id (an A2A task)', { hint: 'serve A2A agents from a flows folder or a NATS cluster' }));
      }
      const agent = request.flow.nodes.find((node) => node.type === NodeType.AgentCore)?.id;
      if (agent === undefined) throw new RedflowError(errorInfo(ErrorCode.NO_AGENT_CORE, `the flow "${request.flowId}" has no agent`));
      const body = {
        input: request.input,
        ...(request.conversationId !== undefined && { conversationId: request.conversationId }),
        ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
      };
      const deadline = Date.now() + startPatienceMs;
      for (;;) {
        try {
          const { traceId } = await admin.redflow<{ traceId: string }>('POST', `/agents/${encodeURIComponent(agent)}/runs`, body);
          return { traceId };
        } catch (error) {
          // Just saved: the deploy may still be starting the agent.
          if (!(error instanceof RedflowError && error.code === ErrorCode.NODE_RED_AGENT_NOT_RUNNING && Date.now() < deadline)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    },

    async get(traceId) {
      const found = await eventsOf(traceId, 0);
      if (found === undefined) return undefined;
      return runResponse(found.events, { active: found.running, ...(found.flow !== undefined && { flow: found.flow }) });
    },

    async events(traceId, afterSeq) {
      return (await eventsOf(traceId, afterSeq))?.events;
    },

    async *follow(traceId, afterSeq, followOptions = {}) {
      // Node-RED's run logs are not a store this process can follow: it asks Node-RED, each request
      // waiting there for the next event (a long poll). The backend's close ends it too.
      const controller = new AbortController();
      followers.add(controller);
      const signal = followOptions.signal === undefined ? controller.signal : AbortSignal.any([followOptions.signal, controller.signal]);
      try {
        const first = await eventsOf(traceId, afterSeq, 0, signal);
        // A run Node-RED does not have: nothing will come.
        if (first === undefined) return;
        let last = afterSeq;
        let next: EventsAnswer | undefined = first;
        let running = first.running;
        let parked = !running && pendingWait(first.events) !== undefined;
        for (;;) {
          for (const event of next.events) {
            if (event.seq <= last) continue;
            last = event.seq;
            yield event;
            if (isTerminal(event) || signal.aborted) return;
          }
          if (next !== first) running = next.running;
          if (!running && !parked && (next === first || next.events.length === 0)) {
            // Its log stops early and nothing holds it: interrupted (it goes on when Node-RED starts
            // again), unless it waits for an answer.
            const all = await eventsOf(traceId, 0, 0, signal).catch(() => undefined);
            if (all === undefined || pendingWait(all.events) === undefined) return;
            parked = true;
          }
          if (running) parked = false;
          let answer: EventsAnswer | undefined | 'failed';
          do {
            if (!running) await sleep(parkedPollMs, signal);
            if (signal.aborted) return;
            answer = await eventsOf(traceId, last, running ? pollWaitMs : 0, signal).catch(() => 'failed' as const);
            if (signal.aborted) return;
            // Node-RED out of reach for a moment (a restart): ask again.
            if (answer === 'failed') await sleep(parkedPollMs, signal);
          } while (answer === 'failed');
          // A run it no longer has: the end.
          if (answer === undefined) return;
          next = answer;
        }
      } finally {
        followers.delete(controller);
      }
    },

    async list({ flow, limit }) {
      const { runs } = await admin.redflow<{ runs: (RunSummary & { agent?: string })[] }>('GET', `/runs?limit=${limit}`);
      return runs.filter((run) => flow === undefined || run.flow === flow).map(({ agent: _agent, ...summary }) => summary);
    },

    abort,

    async answer(traceId, answer) {
      if (answer.kind === 'expire') throw new RedflowError(errorInfo(ErrorCode.HTTP_BODY_INVALID, 'a wait expires by itself, in Node-RED'));
      if (answer.kind === 'abort') return (await abort(traceId, answer.reason)) === 'unknown' ? 'unknown' : 'answered';
      if (!isValidTraceId(traceId)) return 'unknown';
      try {
        await admin.redflow('POST', `/runs/${encodeURIComponent(traceId)}/answer`, answer);
        return 'answered';
      } catch (error) {
        if (error instanceof RedflowError && error.code === ErrorCode.RUN_NOT_FOUND) return 'unknown';
        throw error;
      }
    },

    async close() {
      closing = true;
      for (const controller of [...followers]) controller.abort();
      followers.clear();
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
