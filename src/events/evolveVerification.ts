import type { AgentEnvelope, Exchange, RunEndedData } from '../contracts/schema-types.js';
import { ErrorCode } from '../errors.js';
import type { RecordedFact } from './eventTypes.js';
import { addUsage, appended, makeModel, makeObservability, makeState, makeStep, openStep, replacedLast, withParts } from './envelopeParts.js';

// The fold of a verification's two events (docs/verification.md), kept apart from evolve.ts, which
// calls these. The pending verification is an exchange of kind `verification`: its `output` is the
// ending the answer would have (logged in `verification.requested`), so a resumed run verifies,
// and ends with, the same answer; once answered it holds the checks, and a failed one is the
// model's next observation.

type Requested = Extract<RecordedFact, { type: 'verification.requested' }>;
type Completed = Extract<RecordedFact, { type: 'verification.completed' }>;

/**
 * The envelope after `verification.requested`: the answer waits for its verification.
 *
 * @example
 * ```ts
 * const next = verificationRequested(envelope, { type: 'verification.requested', iteration: 2, data: { candidate } });
 * next.exchanges?.at(-1)?.status // 'waiting'
 * ```
 */
export function verificationRequested(envelope: AgentEnvelope, event: Requested): AgentEnvelope {
  const exchange: Exchange = { iteration: event.iteration, kind: 'verification', status: 'waiting', output: event.data.candidate };
  return withParts(envelope, envelope.state, envelope.model, envelope.tools, envelope.observability, appended(envelope.exchanges ?? [], exchange));
}

/**
 * The envelope after `verification.completed`: the pending verification holds its checks. A failed
 * one closes the iteration's timeline line as a final answer marked with the failure's code (the
 * model revises next); a passed one leaves the line open for the run's ending.
 *
 * @example
 * ```ts
 * const next = verificationCompleted(envelope, { type: 'verification.completed', iteration: 2, data: { passed: false, checks, durationMs: 5 } });
 * next.observability.events.at(-1)?.code // 'VERIFICATION_FAILED'
 * ```
 */
export function verificationCompleted(envelope: AgentEnvelope, event: Completed): AgentEnvelope {
  const { data } = event;
  const exchanges = envelope.exchanges ?? [];
  const pending = exchanges[exchanges.length - 1];
  if (pending === undefined || pending.kind !== 'verification' || pending.status !== 'waiting') return envelope;
  const done: Exchange = { iteration: pending.iteration, kind: 'verification', status: 'answered', output: pending.output, checks: data.checks.slice() };
  if (data.error !== undefined) done.error = data.error;
  const obs = envelope.observability;
  const usage = data.usage === undefined ? obs.usage : addUsage(obs.usage, data.usage);
  const last = openStep(obs.events, event.iteration);
  const durationMs = last === undefined ? data.durationMs : (last.durationMs ?? 0) + data.durationMs;
  if (data.passed) {
    const step = makeStep(event.iteration, last?.action ?? 'model', last?.tool, last?.confidence, durationMs, last?.code);
    const events = last ? replacedLast(obs.events, step) : appended(obs.events, step);
    return withParts(envelope, envelope.state, envelope.model, envelope.tools, makeObservability(obs, events, usage, obs.outcome), replacedLast(exchanges, done));
  }
  const code = data.error === undefined ? ErrorCode.VERIFICATION_FAILED : ErrorCode.VERIFICATION_INVALID;
  const step = makeStep(event.iteration, 'final', undefined, last?.confidence, durationMs, code);
  const events = last ? replacedLast(obs.events, step) : appended(obs.events, step);
  return withParts(
    envelope,
    makeState(envelope.state.iteration, envelope.state.completed, 'final', envelope.state.lastTool),
    makeModel(envelope.model?.lastPrompt, candidateAnswer(pending.output as RunEndedData | undefined), true),
    envelope.tools,
    makeObservability(obs, events, usage, obs.outcome),
    replacedLast(exchanges, done),
  );
}

/** The final answer a candidate ending stands for, as the model gave it. */
function candidateAnswer(candidate: RunEndedData | undefined): Record<string, unknown> {
  const answer: Record<string, unknown> = { action: 'final' };
  const outcome = candidate?.outcome;
  if (outcome?.answer !== undefined) answer.message = outcome.answer;
  if (outcome?.output !== undefined) answer.output = outcome.output;
  return answer;
}
