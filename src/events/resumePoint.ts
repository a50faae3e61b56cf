import type { AgentEnvelope, MemoryRequestedData, RunOutcome, RunStartedData, ToolAttachedData } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import { AgentEventType, type AgentEvent } from './eventTypes.js';
import { fold } from './evolve.js';
import { createRunPathCheck } from './runPath.js';
import { waitOfEvent, type RunWait } from './pendingWait.js';
import { resumeAtAfter, type ResumeAt } from './eventOrder.js';

/** What a resumed run starts from: the fold of its log and the position in the loop. */
export interface ResumePoint {
  readonly envelope: AgentEnvelope;
  readonly at: ResumeAt;
  /** The seq of the last good event in the log. */
  readonly afterSeq: number;
  /** The logged answer's original length, when the log holds it truncated. */
  readonly answerLength?: number;
  /** The logged verdict on the answer, when the log withholds the answer's text. */
  readonly rejection?: ErrorInfo;
  /** The logged answer had its thought (and reflection) taken out: it gave them. */
  readonly reasoningHidden?: boolean;
  /** The logged save of the run's turn, when the run was saving its memory. */
  readonly memoryRequested?: MemoryRequestedData;
  /** What the run waits for, when it resumes at `approval`, `client` or `human`. */
  readonly wait?: RunWait;
  /** Where the work of the call being re-sent lives, when the tool said (`tool.attached`): the call re-attaches to it. */
  readonly attached?: ToolAttachedData;
}

/** What a run's log says about it: finished with an outcome, or where to pick it up. */
export type LogStatus =
  | { readonly kind: 'finished'; readonly outcome: RunOutcome; readonly envelope: AgentEnvelope; readonly started: RunStartedData }
  | { readonly kind: 'resumable'; readonly point: ResumePoint; readonly started: RunStartedData };

/**
 * Reads a run's position off its log (the resume entry points of docs/architecture.md): the fold
 * of the events, and the state to continue from, given the last event that is not a
 * `run.resumed` (`resumeAtAfter`, the one event-order table of `./eventOrder.ts`). Pure.
 *
 * @throws RedflowError LOG_EMPTY when the log does not begin with `run.started`, LOG_PATH_INVALID
 *   when it is not a path the statechart can take (see `createRunPathCheck`).
 */
export function logStatus(events: readonly AgentEvent[]): LogStatus {
  const first = events[0];
  if (!first || first.type !== AgentEventType.RunStarted) {
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_EMPTY, first ? `the log begins with ${first.type}, not run.started` : 'the log holds no events', {
        hint: 'a run can only be resumed from a log that recorded its start',
      }),
    );
  }
  const path = createRunPathCheck();
  for (const event of events) {
    const impossible = path.next(event);
    if (impossible !== undefined) {
      throw new RedflowError(
        errorInfo(ErrorCode.LOG_PATH_INVALID, `event ${event.seq} of run ${first.traceId} is not a step the run could take: ${impossible}`, {
          hint: 'the log was changed after it was written; only the events before this one can be trusted',
        }),
      );
    }
  }
  const started = first.data;
  const envelope = fold(events, first.traceId);
  let last: AgentEvent = first;
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (event.type !== AgentEventType.RunResumed && event.type !== AgentEventType.RunForked) {
      last = event;
      break;
    }
  }
  const afterSeq = (events[events.length - 1] as AgentEvent).seq;
  if (last.type === AgentEventType.RunCompleted || last.type === AgentEventType.RunFailed) {
    return { kind: 'finished', outcome: last.data.outcome, envelope, started };
  }
  const point: { -readonly [K in keyof ResumePoint]: ResumePoint[K] } = { envelope, at: resumeAtAfter(last) ?? 'model', afterSeq };
  switch (last.type) {
    case AgentEventType.ModelAnswered:
      if (last.data.originalLength !== undefined) point.answerLength = last.data.originalLength;
      if (last.data.rejection !== undefined) point.rejection = last.data.rejection as ErrorInfo;
      else if (last.data.thoughtHidden === true) point.reasoningHidden = true;
      break;
    case AgentEventType.ToolRequested:
    case AgentEventType.ToolApproved:
    case AgentEventType.HumanRequested: {
      // A call that waits for an answer from outside resumes into its wait, never re-sent.
      const requested = last.type === AgentEventType.ToolApproved ? lastOfType(events, AgentEventType.ToolRequested)?.data : undefined;
      const wait = waitOfEvent(last, requested);
      if (wait !== undefined) point.wait = wait;
      break;
    }
    case AgentEventType.ToolAttached:
      point.attached = last.data;
      break;
    case AgentEventType.MemoryRequested:
      point.memoryRequested = last.data;
      break;
    case AgentEventType.MemorySaved: {
      const requested = lastOfType(events, AgentEventType.MemoryRequested);
      if (requested) point.memoryRequested = requested.data;
      break;
    }
    default:
      break;
  }
  return { kind: 'resumable', started, point };
}

function lastOfType<T extends AgentEvent['type']>(events: readonly AgentEvent[], type: T): Extract<AgentEvent, { type: T }> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (event.type === type) return event as Extract<AgentEvent, { type: T }>;
  }
  return undefined;
}
