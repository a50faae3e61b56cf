import type { AgentEvent } from '../events/eventTypes.js';
import { pendingWait } from '../events/pendingWait.js';

/**
 * What an eval looks at in a run, read from its log alone: the same reading for the recorded run
 * of a case and for the eval run made from it, so the two compare like for like.
 *
 * @example
 * ```ts
 * const summary: RunSummary = summarizeRun((await readJsonlLog('run.jsonl')).events);
 * console.log(summary.status, summary.answer, summary.tools.join(' → '));
 * ```
 */
export interface RunSummary {
  readonly traceId: string;
  /** The run's input, as `run.started` recorded it. */
  readonly input: unknown;
  /** The flow file the run was started from (absolute, as recorded), when it was a flow's run. */
  readonly flowPath?: string;
  /**
   * How the run ended: an outcome's status (`done`, `done_partial`, `escalate`, `delegate`,
   * `blocked`), or `waiting` (parked on an approval or an answer) or `unfinished`.
   */
  readonly status: string;
  /** The outcome's reason (`final_answer`, `iteration_limit`, …), when it ended. */
  readonly reason?: string;
  /** The final answer's text, when it gave one. */
  readonly answer?: string;
  /** The outcome's structured output, when the flow asks for one. */
  readonly output?: unknown;
  /** The tools it called, in order (one entry per `tool.requested`). */
  readonly tools: readonly string[];
  /** The last iteration it reached. */
  readonly iterations: number;
  /** Total tokens its model calls reported (0 for a model that reports none, like the scripted one). */
  readonly tokens: number;
  /** Of those, the input (prompt) and output (completion) tokens: what a price applies to. */
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** US dollars its model calls cost by the flow's `budget.prices`, when the flow has a budget that prices its model. */
  readonly costUsd?: number;
  /** From its start to its last event, in milliseconds. */
  readonly durationMs: number;
}

/**
 * Reads a run's summary from its events (a log that begins with `run.started`).
 *
 * @example
 * ```ts
 * const { events } = await readJsonlLog('run.jsonl');
 * const summary = summarizeRun(events);
 * console.log(summary.status, summary.tools, summary.tokens);
 * ```
 */
export function summarizeRun(events: readonly AgentEvent[]): RunSummary {
  const first = events[0];
  const last = events.at(-1);
  let tokens = 0;
  let promptTokens = 0;
  let completionTokens = 0;
  let costUsd: number | undefined;
  let iterations = 0;
  const tools: string[] = [];
  let ended: { status: string; reason?: string; answer?: string; output?: unknown } | undefined;
  for (const event of events) {
    iterations = Math.max(iterations, event.iteration);
    if (event.type === 'model.answered') {
      const usage = event.data.usage;
      tokens += usage?.totalTokens ?? 0;
      promptTokens += usage?.promptTokens ?? 0;
      completionTokens += usage?.completionTokens ?? 0;
      // Priced by the flow's budget (its prices over the defaults) when the run had one.
      if (usage?.costUsd !== undefined) costUsd = (costUsd ?? 0) + usage.costUsd;
    }
    else if (event.type === 'tool.requested') tools.push(event.data.tool);
    else if (event.type === 'run.completed' || event.type === 'run.failed') {
      const { outcome } = event.data;
      ended = {
        status: outcome.status,
        reason: outcome.reason,
        ...(outcome.answer !== undefined && { answer: outcome.answer }),
        ...(outcome.output !== undefined && { output: outcome.output }),
      };
    }
  }
  const started = first?.type === 'run.started' ? first.data : undefined;
  const startedAt = Date.parse(started?.startedAt ?? first?.time ?? '');
  const endedAt = Date.parse(last?.time ?? '');
  return {
    traceId: first?.traceId ?? '',
    input: started?.input,
    ...(started?.flow?.path !== undefined && { flowPath: started.flow.path }),
    status: ended?.status ?? (events.length > 0 && pendingWait(events) !== undefined ? 'waiting' : 'unfinished'),
    ...(ended?.reason !== undefined && { reason: ended.reason }),
    ...(ended?.answer !== undefined && { answer: ended.answer }),
    ...(ended?.output !== undefined && { output: ended.output }),
    tools,
    iterations,
    tokens,
    promptTokens,
    completionTokens,
    ...(costUsd !== undefined && { costUsd }),
    durationMs: Number.isFinite(startedAt) && Number.isFinite(endedAt) ? Math.max(0, endedAt - startedAt) : 0,
  };
}
