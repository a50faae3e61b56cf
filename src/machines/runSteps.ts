import type { AgentEnvelope } from '../contracts/schema-types.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import type { ReactState } from './reactState.js';
import { stateAfter } from './reactState.js';

export { stateAfter } from './reactState.js';

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
