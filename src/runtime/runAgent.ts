import type { FlowRef, HistoryMessage, ParentCall } from '../contracts/schema-types.js';
import { RedflowError } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { logStatus } from '../events/resumePoint.js';
import { isPastDeadline, judgeAnswer, type WaitAnswer } from '../events/pendingWait.js';
import type { MemoryRecord } from '../actors/memory.js';
import { systemClock } from './clock.js';
import { randomIds, type IdSource } from './ids.js';
import { checkMemoryRecord } from './dataLimits.js';
import { RunWaitingError } from './runWaitingError.js';
import type { RunBudget } from '../machines/contextBudget.js';
import { launch, type RunEnvironment, type RunHandle, type RunMemory, type RunResult } from './runSession.js';
import type { RunStart } from '../machines/reactTypes.js';

export type { RunEnvironment, RunHandle, RunMemory, RunResult } from './runSession.js';

/**
 * Options of {@link startRun}.
 *
 * @example
 * ```ts
 * const options: StartRunOptions = { ...environment, input: 'Where is order A-1001?', onEvent: (event) => console.log(event.seq, event.type) };
 * const run = startRun(options);
 * ```
 */
export interface StartRunOptions extends RunEnvironment {
  readonly input: unknown;
  readonly traceId?: string;
  readonly ids?: IdSource;
  readonly flow?: FlowRef;
  /** Earlier turns of the conversation this run continues, shown to the model before its input (logged in `run.started`). */
  readonly history?: readonly HistoryMessage[];
  /** Context shown to the model with its input, as one block of text (logged in `run.started`). */
  readonly context?: string;
  /** The call of another run that starts this one as its subagent (logged in `run.started`: the child's link to its parent). */
  readonly parent?: ParentCall;
}

/**
 * Starts a run: loads the conversation's memory, runs the REACT statechart with its actors
 * reached over `transport`, and appends every transition to `store`; the statechart's last step
 * adds the run's turn to the conversation. It checks nothing: its host admits the run first, once
 * (`admitRun` of `src/host`, before it creates a log or a run record); the library's `startRun`
 * (`src/host/startRun.ts`) does both.
 * @example
 * ```ts
 * const run = startRun({ agent, tools, transport, subjects, store, input: 'Where is order A-1?' });
 * const { outcome, envelope } = await run.result;
 * ```
 */
export function startRun(options: StartRunOptions): RunHandle {
  const traceId = options.traceId ?? (options.ids ?? randomIds).traceId();
  const clock = options.clock ?? systemClock;
  return launch(options, traceId, async () => {
    const memory = options.memory ? await loadMemory(options, options.memory) : undefined;
    const run = runStart(options.input, new Date(clock.now()).toISOString(), options);
    if (memory !== undefined) run.memory = memory;
    if (options.memory) run.conversationId = options.memory.conversationId;
    const budget = await budgetOf(options);
    return budget === undefined ? { run } : { run, budget };
  });
}

/**
 * Options of {@link resumeRun}: the environment, and the run's log as read back.
 *
 * @example
 * ```ts
 * const { events } = await store.read(traceId);
 * const run = resumeRun({ ...environment, events } satisfies ResumeRunOptions);
 * ```
 */
export interface ResumeRunOptions extends RunEnvironment {
  readonly events: readonly AgentEvent[];
  /**
   * The answer to the wait the log ends in (a person's decision, a client tool's result, or the
   * wait's deadline passing): the run resumes into its wait and takes it. Without one, a run whose
   * log ends in a wait stays parked (`result` rejects with `RUN_WAITING` at once, nothing recorded).
   * Once the wait's deadline has passed (by `clock`), the wait expires instead, answer or not: the
   * run ends blocked with `WAIT_EXPIRED`.
   */
  readonly answer?: WaitAnswer;
}

/**
 * Continues an interrupted run from its log (invariant 4 of docs/architecture.md): the envelope is
 * the fold of the log, an unanswered model request is asked again, and a tool request that was
 * logged but not completed is re-sent with the same idempotency key. A finished run resolves at
 * once with its outcome.
 *
 * @example
 * ```ts
 * const { events } = await readJsonlLog('run.jsonl');
 * const { outcome } = await resumeRun({ ...environment, events }).result;
 * ```
 */
export function resumeRun(options: ResumeRunOptions): RunHandle {
  const status = logStatus(options.events);
  const traceId = status.started === undefined ? '' : (options.events[0] as AgentEvent).traceId;
  const lastSeq = (options.events[options.events.length - 1] as AgentEvent).seq;
  // A safety net: hosts take answers through the run host (host/takeAnswer.ts), which judges them
  // and turns a late one into the expiry; a resume whose answer does not fit its log is refused here
  // all the same, and a wait past its deadline expires whoever resumes it.
  if (options.answer !== undefined) {
    const verdict = judgeAnswer(options.events, options.answer);
    if (!verdict.ok) throw new RedflowError(verdict.error);
  }
  if (status.kind === 'finished') return settledHandle(traceId, Promise.resolve({ traceId, outcome: status.outcome, envelope: status.envelope, lastSeq }));
  const { started, point } = status;
  // A wait past its deadline takes no answer: it expires, whoever resumes it (a late answer, or none).
  const expired = point.wait !== undefined && isPastDeadline(point.wait, (options.clock ?? systemClock).now());
  const answer: WaitAnswer | undefined = expired ? { kind: 'expire' } : options.answer;
  // A parked run stays parked until its answer comes: resuming it without one records nothing.
  if (point.wait !== undefined && answer === undefined) {
    const parked = Promise.reject(new RunWaitingError(traceId, point.wait, point.envelope, lastSeq));
    parked.catch(() => undefined);
    return settledHandle(traceId, parked);
  }
  const timeoutMs = options.timeoutMs ?? started.timeoutMs;
  return launch({ ...options, ...(timeoutMs !== undefined && { timeoutMs }) }, traceId, async () => {
    const run = runStart(started.input, started.startedAt, started);
    if (started.memory !== undefined) run.memory = started.memory;
    if (started.conversationId !== undefined) run.conversationId = started.conversationId;
    // The agent the host passes is the one the log recorded: the budget resumes as it started.
    const budget = await budgetOf(options);
    return { run, resume: point, ...(budget !== undefined && { budget }), ...(answer !== undefined && point.wait !== undefined && { answer: { answer, wait: point.wait } }) };
  });
}

/**
 * A run's start with the members `from` has of flow, history, context and parent, set one by one:
 * a run keeps it for its whole life, and a literal of conditional spreads is sized for all of them.
 */
function runStart(input: unknown, startedAt: string, from: Pick<RunStart, 'flow' | 'history' | 'context' | 'parent'>): { -readonly [K in keyof RunStart]: RunStart[K] } {
  const run: { -readonly [K in keyof RunStart]: RunStart[K] } = { input, startedAt };
  if (from.flow !== undefined) run.flow = from.flow;
  if (from.history !== undefined) run.history = from.history;
  if (from.context !== undefined) run.context = from.context;
  if (from.parent !== undefined) run.parent = from.parent;
  return run;
}

/** The run's budget, when its agent sets one: loaded on demand (the tokenizer and prices are not on the root import's path). */
async function budgetOf(options: RunEnvironment): Promise<RunBudget | undefined> {
  if (options.agent.budget === undefined) return undefined;
  const { runBudgetFor } = await import('./runBudgetFor.js');
  return runBudgetFor(options.agent, options.modelName ?? '');
}

/** The handle of a run that needs no process: finished, or parked in a wait. */
function settledHandle(traceId: string, result: Promise<RunResult>): RunHandle {
  return { traceId, result, abort: () => undefined, stop: () => undefined, actor: () => undefined };
}

async function loadMemory(env: RunEnvironment, memory: RunMemory): Promise<MemoryRecord | undefined> {
  const reply = await env.transport.request<{ conversationId: string }, MemoryRecord | null>(
    memory.loadSubject,
    { conversationId: memory.conversationId },
    { timeoutMs: 30_000 },
  );
  if (!reply.ok) throw new RedflowError(reply.error);
  checkMemoryRecord(reply.data, memory.conversationId);
  return reply.data ?? undefined;
}
