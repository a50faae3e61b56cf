import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { resumeAtAfter, type ResumeAt } from '../events/eventOrder.js';
import { ReactState } from './reactState.js';

/**
 * Where the statechart stands after each event of a log, read off the one event-order table
 * (`EVENT_ORDER`, src/events/eventOrder.ts): the state a resumed run enters at each resume point
 * (the machine's `starting` transitions), and so the state after each event (`runSteps`, the
 * editor, the inspector). Pure data: the machine, the log's readers and the browser import it.
 */

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
