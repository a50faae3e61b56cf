import { AgentEventType, type AgentEvent } from './eventTypes.js';
import type { WaitKind } from './waits.js';

/**
 * The one "which event may follow which" table of a run's log, and where a run whose log ends with
 * each event picks up. The statechart records one event per step, so this is its transitions as
 * seen in the log: `runPath` checks a log against it, `logStatus` resumes from it, the machine's
 * `starting` state and `stateAfter` (src/machines/reactState.ts) read it, and a test walks the
 * machine's definition to keep the two equal (test/machines/eventOrder.spec.ts). Pure data.
 */

/**
 * Where a resumed run picks up, derived from the last event of its log:
 * - `model`: the run started but its first model request was not logged;
 * - `modelResend`: a model request was logged without an answer: ask again;
 * - `validating`: an answer was logged but not judged: validate it again (deterministic);
 * - `toolResend`: a tool request was logged without a result: re-send it with the same key;
 * - `approval`: the call waits for a person's approve or deny (its request, or nothing since, was logged last);
 * - `client`: the call waits for its result from the client that runs it;
 * - `human`: the model asked a person (escalate, request_info) and waits for the answer;
 * - `checkingStop`: a tool result (or a denial) was logged: decide whether to go on;
 * - `verifyResend`: a final answer went to verification without the verifier's answer logged: ask again;
 * - `verified`: the verifier's answer was logged: end with the answer, or revise (deterministic);
 * - `memoryResend`: the turn's save was logged without its result: send it again (it is idempotent);
 * - `concluding`: the turn was saved: record the ending decided before the save.
 */
export type ResumeAt =
  | 'model'
  | 'modelResend'
  | 'validating'
  | 'toolResend'
  | 'approval'
  | 'client'
  | 'human'
  | 'checkingStop'
  | 'verifyResend'
  | 'verified'
  | 'memoryResend'
  | 'concluding';

/** One row of {@link EVENT_ORDER}. */
export interface EventOrder {
  /**
   * The events that may come next. `run.resumed` is left out: it may follow any event but an
   * ending, and is then followed by what could have followed the event before it; so is
   * `run.forked`, which follows only the `run.started` of a fork.
   */
  readonly next: readonly AgentEventType[];
  /** Where a run whose log ends here picks up (`undefined`: never resumed from), unless the event begins a wait. */
  readonly resumeAt: ResumeAt | undefined;
  /** The waits the event may begin (its `wait` data says which, if any): a run resumes into its wait. */
  readonly waits: readonly WaitKind[];
}

const { ModelRequested, ModelAnswered, ToolRequested, ToolCompleted, ToolApproved, ToolDenied, ToolAttached, HumanRequested, HumanAnswered, OutputRejected, AnswerRejected, MemoryRequested, MemorySaved, RunCompleted, RunFailed } =
  AgentEventType;
const { VerificationRequested, VerificationCompleted } = AgentEventType;

/**
 * Every event type's row. Any step that can end the run may first save the conversation's turn
 * (`memory.requested`) when the run keeps one; `runPath` checks the rest (which ending, which
 * wait, which iteration) against the run's config.
 */
export const EVENT_ORDER: { readonly [T in AgentEventType]: EventOrder } = {
  // Recorded with the first model.requested (a log cut between the two asks the model), or with
  // the end when the first call's input alone is over the run's budget.
  [AgentEventType.RunStarted]: { next: [ModelRequested, MemoryRequested, RunFailed], resumeAt: 'model', waits: [] },
  // Never where a run stands: the event before it is.
  [AgentEventType.RunResumed]: { next: [], resumeAt: undefined, waits: [] },
  // Never where a run stands either: it only follows a fork's run.started, and what follows it is
  // what could have followed run.started (the parent's next event, or the live run's).
  [AgentEventType.RunForked]: { next: [], resumeAt: undefined, waits: [] },
  // An answer, or the end: a model failure, an abort, the timeout.
  [ModelRequested]: { next: [ModelAnswered, MemoryRequested, RunFailed], resumeAt: 'modelResend', waits: [] },
  // A tool call, a question to a person, an output or an invalid answer sent back for repair, or
  // the end: a final answer (or its verification first), a delegation, an invalid answer.
  [ModelAnswered]: {
    next: [ToolRequested, HumanRequested, OutputRejected, AnswerRejected, VerificationRequested, MemoryRequested, RunCompleted, RunFailed],
    resumeAt: 'validating',
    waits: [],
  },
  // The verifier's answer, or the end: its model failure, an abort, the timeout.
  [VerificationRequested]: { next: [VerificationCompleted, MemoryRequested, RunFailed], resumeAt: 'verifyResend', waits: [] },
  // The revise turn, or the end: the answer verified, or out of verifications (done_partial).
  [VerificationCompleted]: { next: [ModelRequested, MemoryRequested, RunCompleted], resumeAt: 'verified', waits: [] },
  // The result, the decision on a call that waits for one, or the end: an abort, the timeout, the wait's deadline.
  // A call in flight may first say where its work lives (`tool.attached`).
  [ToolRequested]: { next: [ToolCompleted, ToolApproved, ToolDenied, ToolAttached, MemoryRequested, RunFailed], resumeAt: 'toolResend', waits: ['approval', 'client'] },
  // The result (of the tool, or of the client that runs it), or the end.
  [ToolApproved]: { next: [ToolCompleted, ToolAttached, MemoryRequested, RunFailed], resumeAt: 'toolResend', waits: ['client'] },
  // The call goes on: its result, or the end. A call re-sent after a crash may attach again.
  [ToolAttached]: { next: [ToolCompleted, ToolAttached, MemoryRequested, RunFailed], resumeAt: 'toolResend', waits: [] },
  // The next iteration, or a stop condition.
  [ToolCompleted]: { next: [ModelRequested, MemoryRequested, RunCompleted], resumeAt: 'checkingStop', waits: [] },
  [ToolDenied]: { next: [ModelRequested, MemoryRequested, RunCompleted], resumeAt: 'checkingStop', waits: [] },
  // The answer, or the end: no answer in time (escalate), an abort, the timeout. Always begins a wait.
  [HumanRequested]: { next: [HumanAnswered, MemoryRequested, RunCompleted, RunFailed], resumeAt: 'human', waits: ['human'] },
  [HumanAnswered]: { next: [ModelRequested, MemoryRequested, RunCompleted], resumeAt: 'checkingStop', waits: [] },
  // Recorded with the repair turn's model.requested: a log cut between the two asks the model.
  [OutputRejected]: { next: [ModelRequested], resumeAt: 'model', waits: [] },
  [AnswerRejected]: { next: [ModelRequested], resumeAt: 'model', waits: [] },
  // The save's result, or its failure.
  [MemoryRequested]: { next: [MemorySaved, RunFailed], resumeAt: 'memoryResend', waits: [] },
  // The ending decided before the save.
  [MemorySaved]: { next: [RunCompleted, RunFailed], resumeAt: 'concluding', waits: [] },
  [RunCompleted]: { next: [], resumeAt: undefined, waits: [] },
  [RunFailed]: { next: [], resumeAt: undefined, waits: [] },
};

/** True when an event of type `next` may follow one of type `last` in a run's log (`run.resumed` aside). */
export function mayFollow(last: AgentEventType, next: AgentEventType): boolean {
  return EVENT_ORDER[last].next.includes(next);
}

/** What an event waits for, when it begins a wait (`wait` on `tool.requested`, `tool.approved`, `human.requested`). */
export function waitKindOf(event: Pick<AgentEvent, 'type'> & { readonly data?: unknown }): WaitKind | undefined {
  if (EVENT_ORDER[event.type].waits.length === 0) return undefined;
  return (event.data as { wait?: { for: WaitKind } } | undefined)?.wait?.for;
}

/**
 * Where a run whose log ends with `event` (not counting `run.resumed`) picks up; `undefined` after
 * its ending. A run whose last event begins a wait picks up in the wait itself.
 *
 * @example
 * ```ts
 * resumeAtAfter({ type: 'tool.requested', data: { wait: { for: 'approval', timeoutMs: 1000 } } }) // 'approval'
 * ```
 */
export function resumeAtAfter(event: Pick<AgentEvent, 'type'> & { readonly data?: unknown }): ResumeAt | undefined {
  return waitKindOf(event) ?? EVENT_ORDER[event.type].resumeAt;
}
