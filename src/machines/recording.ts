import { enqueueActions } from 'xstate';
import type { RecordedFact } from '../events/eventTypes.js';
import { evolve } from '../events/evolve.js';
import type { FactEmitted, ReactContext, ReactEvent } from './reactTypes.js';

// How the statechart's `record*` actions record (reactSetup.ts, verifying.ts): one event each.

/** What a recording action records: the fact, and what else of the context changes with it. */
export interface Recorded {
  readonly fact: RecordedFact;
  readonly more: Partial<ReactContext> | undefined;
}

/** The fact a recording action records (with `more` of the context): see {@link recording}. */
export function record(fact: RecordedFact, more?: Partial<ReactContext>): Recorded {
  return { fact, more };
}

/**
 * A recording action: records the fact `factOf` gives (if any) in one step. The envelope becomes
 * `evolve(envelope, fact)`, and the fact is emitted for the host's recorder to stamp and append,
 * so the live envelope is the fold of the log by construction.
 */
export function recording(factOf: (args: { readonly context: ReactContext; readonly event: ReactEvent }) => Recorded | undefined) {
  return enqueueActions<ReactContext, ReactEvent, undefined, ReactEvent, never, never, never, never, FactEmitted>(({ context, event, enqueue }) => {
    const recorded = factOf({ context, event });
    if (recorded === undefined) return;
    const envelope = evolve(context.envelope, recorded.fact);
    enqueue.assign(recorded.more === undefined ? { envelope } : { envelope, ...recorded.more });
    enqueue.emit({ type: 'fact', fact: recorded.fact });
  });
}
