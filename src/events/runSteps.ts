import type { AgentEnvelope } from '../contracts/schema-types.js';
import { ReactState } from '../machines/reactState.js';
import { AgentEventType, type AgentEvent } from './eventTypes.js';
import { emptyEnvelope, evolve } from './evolve.js';

/** The statechart state a run is in once each event type has been appended. */
const STATE_AFTER: { readonly [T in AgentEventType]: ReactState } = {
  [AgentEventType.RunStarted]: ReactState.Starting,
  [AgentEventType.RunResumed]: ReactState.Starting,
  [AgentEventType.ModelRequested]: ReactState.AwaitingModel,
  [AgentEventType.ModelAnswered]: ReactState.Validating,
  [AgentEventType.ToolRequested]: ReactState.AwaitingTool,
  [AgentEventType.ToolCompleted]: ReactState.CheckingStop,
  [AgentEventType.MemoryRequested]: ReactState.SavingMemory,
  [AgentEventType.MemorySaved]: ReactState.Concluding,
  [AgentEventType.RunCompleted]: ReactState.Done,
  [AgentEventType.RunFailed]: ReactState.Error,
};

/**
 * The state the REACT statechart is in right after it recorded `event`. Every event is recorded
 * on one transition, so the log alone says where the machine was at each step.
 *
 * @example
 * ```ts
 * stateAfter({ type: 'tool.requested', ... }) // 'awaitingTool'
 * ```
 */
export function stateAfter(event: Pick<AgentEvent, 'type'>): ReactState {
  return STATE_AFTER[event.type];
}

/** One step of a run as read back from its log: the event, the state after it, the envelope after it. */
export interface RunStep {
  readonly event: AgentEvent;
  readonly state: ReactState;
  readonly envelope: AgentEnvelope;
}

/**
 * A run's log as the steps the statechart went through, for stepping through a finished run (the
 * editor's scrubber) and for replaying it into the Stately inspector. The envelopes are the fold
 * of the log up to each event, so the last one equals `fold(events)`.
 *
 * @example
 * ```ts
 * const steps = runSteps(events);
 * steps.at(-1)?.state // 'done'
 * ```
 */
export function runSteps(events: readonly AgentEvent[]): RunStep[] {
  const steps: RunStep[] = [];
  let envelope = emptyEnvelope(events[0]?.traceId ?? '');
  for (const event of events) {
    envelope = evolve(envelope, event);
    steps.push({ event, state: stateAfter(event), envelope });
  }
  return steps;
}
