import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { ReactState } from './reactState.js';
import type { ResumeAt } from './reactTypes.js';
import type { WaitKind } from './waits.js';

/**
 * The one table from a log's last event to where its run stands: the resume point a resumed run
 * picks up at (`logStatus`), the state it enters there (the machine's `starting` transitions),
 * and so the state the statechart is in after each event (`runSteps`, the editor, the inspector).
 * Pure data: the machine, the fold's readers and the browser all import it.
 */

/** The resume point after each event type, when it is the last of the log (a wait aside; `undefined`: never resumed from). */
const RESUME_AFTER: { readonly [T in AgentEventType]: ResumeAt | undefined } = {
  [AgentEventType.RunStarted]: 'model',
  // Never where a run stands: the event before it is.
  [AgentEventType.RunResumed]: undefined,
  [AgentEventType.ModelRequested]: 'modelResend',
  [AgentEventType.ModelAnswered]: 'validating',
  [AgentEventType.ToolRequested]: 'toolResend',
  [AgentEventType.ToolApproved]: 'toolResend',
  [AgentEventType.ToolCompleted]: 'checkingStop',
  [AgentEventType.ToolDenied]: 'checkingStop',
  // Always begins a wait (below).
  [AgentEventType.HumanRequested]: 'human',
  [AgentEventType.HumanAnswered]: 'checkingStop',
  // Recorded with the repair turn's model.requested: a log cut between the two asks the model.
  [AgentEventType.OutputRejected]: 'model',
  [AgentEventType.MemoryRequested]: 'memoryResend',
  [AgentEventType.MemorySaved]: 'concluding',
  [AgentEventType.RunCompleted]: undefined,
  [AgentEventType.RunFailed]: undefined,
};

/** The resume point of a run whose last event begins a wait: the wait itself. */
const RESUME_IN_WAIT: { readonly [K in WaitKind]: ResumeAt } = { approval: 'approval', client: 'client', human: 'human' };

/** The state a resumed run enters at each resume point. */
export const RESUME_ENTRY: { readonly [A in ResumeAt]: ReactState } = {
  model: ReactState.AwaitingModel,
  modelResend: ReactState.AwaitingModel,
  validating: ReactState.Validating,
  toolResend: ReactState.AwaitingTool,
  approval: ReactState.AwaitingApproval,
  client: ReactState.AwaitingClient,
  human: ReactState.AwaitingHuman,
  checkingStop: ReactState.CheckingStop,
  memoryResend: ReactState.SavingMemory,
  concluding: ReactState.Concluding,
};

/** Every resume point, in the order the machine's `starting` state tries them. */
export const RESUME_POINTS = Object.keys(RESUME_ENTRY) as readonly ResumeAt[];

/** What an event waits for, when it begins a wait (`wait` on `tool.requested`, `tool.approved`, `human.requested`). */
export function waitKindOf(event: Pick<AgentEvent, 'type'> & { readonly data?: unknown }): WaitKind | undefined {
  if (event.type !== AgentEventType.ToolRequested && event.type !== AgentEventType.ToolApproved && event.type !== AgentEventType.HumanRequested) return undefined;
  return (event.data as { wait?: { for: WaitKind } } | undefined)?.wait?.for;
}

/**
 * Where a run whose log ends with `event` (not counting `run.resumed`) picks up; `undefined` after
 * its ending.
 *
 * @example
 * ```ts
 * resumeAtAfter({ type: 'tool.requested', data: { wait: { for: 'approval', timeoutMs: 1000 } } }) // 'approval'
 * ```
 */
export function resumeAtAfter(event: Pick<AgentEvent, 'type'> & { readonly data?: unknown }): ResumeAt | undefined {
  const wait = waitKindOf(event);
  return wait === undefined ? RESUME_AFTER[event.type] : RESUME_IN_WAIT[wait];
}

/**
 * The state the REACT statechart is in right after it recorded `event`. Every event is recorded
 * on one transition, so the log alone says where the machine was at each step.
 *
 * @example
 * ```ts
 * stateAfter({ type: 'tool.requested', ... }) // 'awaitingTool' ('awaitingApproval' when its data has wait: { for: 'approval' })
 * ```
 */
export function stateAfter(event: Pick<AgentEvent, 'type'> & { readonly data?: unknown }): ReactState {
  // The new run records run.started and its first model.requested on one transition out of starting.
  if (event.type === AgentEventType.RunStarted || event.type === AgentEventType.RunResumed) return ReactState.Starting;
  if (event.type === AgentEventType.RunCompleted) return ReactState.Done;
  if (event.type === AgentEventType.RunFailed) return ReactState.Error;
  return RESUME_ENTRY[resumeAtAfter(event) ?? 'model'];
}
