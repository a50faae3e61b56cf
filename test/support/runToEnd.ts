import { expect } from 'vitest';
import type { RunOutcome } from '../../src/contracts/schema-types.js';
import type { EventStore } from '../../src/events/eventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { settleRun } from '../../src/host/answerWaitingRun.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';

type RunEnvironment = Omit<Parameters<typeof startRun>[0], 'input' | 'traceId'> & { readonly store: EventStore };

/**
 * Runs `which order shipped?` (trace `r-1`) to its end, or resumes it from `prefix` of its log
 * when given, and checks the live envelope against the fold of the log it wrote.
 */
export async function runToEnd(env: RunEnvironment, prefix?: readonly AgentEvent[]): Promise<{ outcome: RunOutcome; events: AgentEvent[] }> {
  let handle;
  if (prefix === undefined) handle = startRun({ ...env, input: 'which order shipped?', traceId: 'r-1' });
  else {
    for (const event of prefix) await env.store.append(event);
    handle = resumeRun({ ...env, events: prefix });
  }
  const settled = await settleRun(handle);
  if (settled.kind !== 'ended') throw new Error('the run did not end');
  const events = [...(await env.store.read('r-1')).events] as AgentEvent[];
  expect(fold(events)).toEqual(settled.envelope);
  return { outcome: settled.outcome as RunOutcome, events };
}
