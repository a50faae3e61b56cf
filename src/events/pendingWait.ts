/**
 * What a run's log says about a wait: whether the run waits for an answer from outside now (a
 * person's approval of a call, the result of a tool its client runs, or a person's answer to the
 * model's question), until when, and whether an answer fits that wait. Pure: hosts (the CLI, the server, core workers) read waits off the
 * log, so a waiting run needs no process to remember it.
 */
import type { HumanQuestion, ToolRequestedData, WaitStart } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { AgentEventType, isTerminal, type AgentEvent, type ToolResult } from './eventTypes.js';

/**
 * A wait the run is in: the call (or question) it is about, and its deadline.
 *
 * @example
 * ```ts
 * const settled = await settleRun(run);
 * if (settled.kind === 'waiting') {
 *   const wait: RunWait = settled.wait;
 *   console.log(wait.kind, wait.tool, wait.input, wait.deadline); // 'approval' 'refund' { orderId: 'A-1001' } '2026-…'
 * }
 * ```
 */
export interface RunWait {
  /**
   * `approval`: a person approves or denies the call; `client`: the client runs the tool and posts
   * its result; `human`: a person answers the model's question (`question`).
   */
  readonly kind: WaitStart['for'];
  /** The call's tool; empty for a question. */
  readonly tool: string;
  readonly input: ToolRequestedData['input'];
  /** The call's idempotency key, or the question's key: `<traceId>:<iteration>` either way. */
  readonly idempotencyKey: string;
  /** What the model asked, for a `human` wait. */
  readonly question?: HumanQuestion;
  readonly iteration: number;
  /** The seq of the event that began the wait (`tool.requested`, or `tool.approved` for a client tool). */
  readonly seq: number;
  /** That event's time: the wait's start. */
  readonly since: string;
  readonly timeoutMs: number;
  /** `since` plus `timeoutMs`, as an ISO time: past it, the run ends blocked with `WAIT_EXPIRED`. */
  readonly deadline: string;
}

/** Which call an answer is for, when the answerer says (checked against the wait; either may be left out). */
export interface AnswerTarget {
  readonly idempotencyKey?: string;
  readonly iteration?: number;
}

/**
 * An answer to a wait: a person's decision, a client tool's result, the deadline passing (a
 * host's sweeper sends that one), or an abort of the waiting run.
 */
export type WaitAnswer =
  | (AnswerTarget & { readonly kind: 'approval'; readonly approved: boolean; readonly reason?: string })
  | (AnswerTarget & { readonly kind: 'client'; readonly result: ToolResult })
  | (AnswerTarget & { readonly kind: 'human'; readonly text: string })
  | { readonly kind: 'expire' }
  | { readonly kind: 'abort'; readonly reason?: string };

/** An answer about the call itself (a decision, a result), as clients give them. */
export type CallAnswer = Extract<WaitAnswer, { kind: 'approval' | 'client' }>;

/**
 * Every answer a client gives: about a call, or a person's answer to the model's question.
 *
 * @example
 * ```ts
 * const answer: GivenAnswer = { kind: 'approval', approved: false, reason: 'refunds over 100 need a manager' };
 * await answerWaitingRun({ ...environment, traceId, answer });
 * ```
 */
export type GivenAnswer = Extract<WaitAnswer, { kind: 'approval' | 'client' | 'human' }>;

/** How an answer fits a run's log: the wait it answers, or why it does not fit (a coded error). */
export type AnswerJudgement = { readonly ok: true; readonly wait: RunWait } | { readonly ok: false; readonly error: ErrorInfo };

type WaitEvent = Extract<AgentEvent, { type: 'tool.requested' | 'tool.approved' | 'human.requested' }>;

/**
 * The wait an event begins, if it begins one. `requested` is the call's `tool.requested` (for a
 * `tool.approved`, where the input is); without it the input is taken as empty.
 */
export function waitOfEvent(event: AgentEvent, requested?: Pick<ToolRequestedData, 'input'>): RunWait | undefined {
  if (event.type === AgentEventType.HumanRequested) {
    const { data } = event;
    const question: HumanQuestion = { action: data.action, question: data.question };
    if (data.reason !== undefined) question.reason = data.reason;
    if (data.context !== undefined) question.context = data.context;
    return { ...waitTimes(event, data.wait), kind: data.wait.for, tool: '', input: {}, idempotencyKey: data.key, question };
  }
  if (event.type !== AgentEventType.ToolRequested && event.type !== AgentEventType.ToolApproved) return undefined;
  const { wait } = event.data;
  if (wait === undefined) return undefined;
  const input = event.type === AgentEventType.ToolRequested ? event.data.input : (requested?.input ?? {});
  return { kind: wait.for, tool: event.data.tool, input, idempotencyKey: event.data.idempotencyKey, ...waitTimes(event, wait) };
}

function waitTimes(event: AgentEvent, wait: WaitStart): Pick<RunWait, 'iteration' | 'seq' | 'since' | 'timeoutMs' | 'deadline'> {
  const start = Date.parse(event.time);
  return {
    iteration: event.iteration,
    seq: event.seq,
    since: event.time,
    timeoutMs: wait.timeoutMs,
    deadline: Number.isFinite(start) ? new Date(start + wait.timeoutMs).toISOString() : event.time,
  };
}

/**
 * The wait a run is in, read off its log: its last event that is not a `run.resumed` began a
 * wait (a `tool.requested` or `tool.approved` carrying `wait`) and nothing answered it since.
 * `undefined` when the run waits for nothing (it is under way, ended, or stopped elsewhere).
 *
 * @example
 * ```ts
 * const wait = pendingWait((await store.read(traceId)).events);
 * if (wait?.kind === 'approval') console.log(`approve ${wait.tool} before ${wait.deadline}`);
 * ```
 */
export function pendingWait(events: readonly AgentEvent[]): RunWait | undefined {
  const last = lastStep(events);
  if (last === undefined) return undefined;
  return waitOfEvent(last, last.type === AgentEventType.ToolApproved ? requestOf(events, last.data.idempotencyKey) : undefined);
}

/** True once `nowMs` is at or past the wait's deadline: an answer then comes too late, and the wait expires. */
export function isPastDeadline(wait: Pick<RunWait, 'deadline'>, nowMs: number): boolean {
  return nowMs >= Date.parse(wait.deadline);
}

/**
 * Whether `answer` answers the wait the log ends in. It does not when the run has ended
 * (`RUN_ALREADY_FINISHED`), waits for nothing or for the other kind of answer (`RUN_NOT_WAITING`),
 * already had the answer this one repeats (`WAIT_ALREADY_ANSWERED`: a wait takes one answer), or
 * waits on another call than the one the answer names (`WAIT_ANSWER_MISMATCH`).
 *
 * @example
 * ```ts
 * const verdict = judgeAnswer(events, { kind: 'approval', approved: true });
 * if (!verdict.ok) throw new RedflowError(verdict.error);
 * ```
 */
export function judgeAnswer(events: readonly AgentEvent[], answer: WaitAnswer): AnswerJudgement {
  const traceId = events[0]?.traceId ?? '';
  const last = events[events.length - 1];
  if (last !== undefined && isTerminal(last)) {
    const outcome = last.type === AgentEventType.RunCompleted || last.type === AgentEventType.RunFailed ? last.data.outcome : undefined;
    return refuse(
      errorInfo(ErrorCode.RUN_ALREADY_FINISHED, `run ${traceId} has ended (${outcome?.status ?? 'finished'}, ${outcome?.reason ?? 'no outcome'}): it waits for no answer`),
    );
  }
  const wait = pendingWait(events);
  // An expiry or an abort ends whatever the run waits for.
  if (answer.kind === 'expire' || answer.kind === 'abort') {
    return wait ? { ok: true, wait } : refuse(errorInfo(ErrorCode.RUN_NOT_WAITING, `run ${traceId} waits for nothing`));
  }
  const wanted = WANTED[answer.kind];
  const named = answer.idempotencyKey !== undefined || answer.iteration !== undefined;
  if (wait && wait.kind === answer.kind) {
    if ((answer.idempotencyKey === undefined || answer.idempotencyKey === wait.idempotencyKey) && (answer.iteration === undefined || answer.iteration === wait.iteration)) {
      return { ok: true, wait };
    }
    const earlier = answeredCall(events, answer.kind, answer);
    if (earlier) return refuse(alreadyAnswered(traceId, earlier));
    return refuse(
      errorInfo(
        ErrorCode.WAIT_ANSWER_MISMATCH,
        `run ${traceId} waits for ${wanted} ${wait.kind === 'human' ? 'to its question' : `of its call to ${wait.tool}`} (idempotency key ${wait.idempotencyKey}, iteration ${wait.iteration}), not of ${describeTarget(answer)}`,
        { hint: `answer with idempotencyKey "${wait.idempotencyKey}", or without naming the call` },
      ),
    );
  }
  // Not waiting for this kind of answer now: say so, or that this answer was given already.
  const earlier = answeredCall(events, answer.kind, named ? answer : undefined);
  // Unnamed, it is taken for the last such wait when the run waits for nothing else, or still on that call.
  if (earlier && (named || !wait || earlier.idempotencyKey === wait.idempotencyKey)) return refuse(alreadyAnswered(traceId, earlier));
  const now = wait ? `it waits for ${describeWait(wait)}` : `its log ends with ${last?.type ?? 'nothing'}`;
  return refuse(
    errorInfo(ErrorCode.RUN_NOT_WAITING, `run ${traceId} does not wait for ${wanted}: ${now}`, {
      hint: 'GET /api/runs/<traceId> shows what a run waits for (its status and waiting)',
    }),
  );
}

/** What each kind of answer is, in words. */
const WANTED: { readonly [K in WaitStart['for']]: string } = { approval: 'an approval', client: "a client tool's result", human: "a person's answer" };

/** What a wait waits for, in words (for messages). */
export function describeWait(wait: Pick<RunWait, 'kind' | 'tool' | 'question'>): string {
  if (wait.kind === 'approval') return `an approval of its call to ${wait.tool}`;
  if (wait.kind === 'client') return `the result of ${wait.tool}, which the client runs`;
  return `a person's answer to ${JSON.stringify(wait.question?.question ?? '')}`;
}

/** A wait of the log that was answered, with the answer: for `WAIT_ALREADY_ANSWERED`. */
interface AnsweredCall {
  readonly tool: string;
  readonly idempotencyKey: string;
  readonly iteration: number;
  /** The event that answered it. */
  readonly by: AgentEvent['type'];
}

/**
 * The last call of the log that waited for `kind` and was answered (the one named by `target`,
 * when given): a repeated answer is told it came too late, not that it is unexpected.
 */
function answeredCall(events: readonly AgentEvent[], kind: WaitStart['for'], target: AnswerTarget | undefined): AnsweredCall | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (!beginsWait(event) || event.data.wait.for !== kind) continue;
    const key = event.type === AgentEventType.HumanRequested ? event.data.key : event.data.idempotencyKey;
    if (target?.idempotencyKey !== undefined && target.idempotencyKey !== key) continue;
    if (target?.iteration !== undefined && target.iteration !== event.iteration) continue;
    const answer = events.slice(i + 1).find((later) => answeredBy(later, kind, key));
    if (answer) return { tool: event.type === AgentEventType.HumanRequested ? '' : event.data.tool, idempotencyKey: key, iteration: event.iteration, by: answer.type };
    // The call named is the one the run waits on now: not answered yet.
    if (target !== undefined) return undefined;
  }
  return undefined;
}

function answeredBy(event: AgentEvent, kind: WaitStart['for'], idempotencyKey: string): boolean {
  if (kind === 'human') return event.type === AgentEventType.HumanAnswered && event.data.key === idempotencyKey;
  if (kind === 'approval') {
    return (event.type === AgentEventType.ToolApproved || event.type === AgentEventType.ToolDenied) && event.data.idempotencyKey === idempotencyKey;
  }
  return event.type === AgentEventType.ToolCompleted && event.data.idempotencyKey === idempotencyKey;
}

function alreadyAnswered(traceId: string, call: AnsweredCall): ErrorInfo {
  const given = call.by === AgentEventType.ToolApproved ? 'approved' : call.by === AgentEventType.ToolDenied ? 'denied' : call.by === AgentEventType.HumanAnswered ? 'a person answered' : 'its result recorded';
  const what = call.tool === '' ? 'the question' : `the call to ${call.tool}`;
  return errorInfo(
    ErrorCode.WAIT_ALREADY_ANSWERED,
    `run ${traceId}: ${what} (key ${call.idempotencyKey}, iteration ${call.iteration}) was answered already (${given}); a wait takes one answer`,
    { hint: 'GET /api/runs/<traceId> shows what the run waits for now, if anything' },
  );
}

function describeTarget(target: AnswerTarget): string {
  const parts: string[] = [];
  if (target.idempotencyKey !== undefined) parts.push(`idempotency key ${target.idempotencyKey}`);
  if (target.iteration !== undefined) parts.push(`iteration ${target.iteration}`);
  return `the call with ${parts.join(' and ')}`;
}

function refuse(error: ErrorInfo): AnswerJudgement {
  return { ok: false, error };
}

/** The log's last event that is not a `run.resumed` (nor a fork's `run.forked`). */
function lastStep(events: readonly AgentEvent[]): AgentEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (event.type !== AgentEventType.RunResumed && event.type !== AgentEventType.RunForked) return event;
  }
  return undefined;
}

function requestOf(events: readonly AgentEvent[], idempotencyKey: string): ToolRequestedData | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (event.type === AgentEventType.ToolRequested && event.data.idempotencyKey === idempotencyKey) return event.data;
  }
  return undefined;
}

/** True when `event` begins a wait (a type guard for the three events that may). */
export function beginsWait(event: AgentEvent): event is WaitEvent & { data: { wait: WaitStart } } {
  if (event.type === AgentEventType.HumanRequested) return true;
  return (event.type === AgentEventType.ToolRequested || event.type === AgentEventType.ToolApproved) && event.data.wait !== undefined;
}
