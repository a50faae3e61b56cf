import type { RunEndedData, RunEnding, VerificationCompletedData } from '../contracts/schema-types.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { validateVerification } from '../validation/validateVerification.js';
import { finalAnswerData } from './endings.js';
import type { ReactContext, ReactEvent, TransportCommand } from './reactTypes.js';
import { failedVerifications, lastVerification, unverifiedEnding, verificationFailed, verificationMessages, verificationOf, verifiedEnding } from './verification.js';
import { iterationLimit } from '../events/stopConditions.js';

// The `verifying` state's guards and actions (docs/verification.md), spread into the statechart's
// setup (reactSetup.ts). Everything is read off the envelope (the pending verification is its last
// exchange), so a run resumed into `verifying` asks, and decides, what the live run would have.

/** The verification of the last exchange once answered, when there is one. */
function answered(context: ReactContext) {
  const exchange = lastVerification(context.envelope);
  return exchange?.status === 'answered' ? exchange : undefined;
}

/** The ending the verified answer would have: logged in `verification.requested`, read back from the envelope. */
function candidateOf(context: ReactContext): RunEndedData {
  return (lastVerification(context.envelope)?.output as RunEndedData | undefined) ?? { outcome: { status: 'done', reason: 'final_answer' } };
}

/** True when a failed verification leaves no room to revise: out of verifications, or of iterations. */
function outOfVerifications(context: ReactContext): boolean {
  const settings = verificationOf(context.settings.agent);
  const { envelope } = context;
  return failedVerifications(envelope) >= (settings?.maxFailures ?? 1) || envelope.state.iteration >= iterationLimit(context.settings.agent).limit;
}

/**
 * The guards and the parts of the actions of verification, as plain functions of the context (the
 * statechart's setup, reactSetup.ts, wraps them): a final answer goes to verification when the
 * agent verifies; once the verifier answered, the run ends with the answer (passed), ends
 * done_partial (failed, none left) or revises.
 *
 * @example
 * ```ts
 * guards: { verificationPassed: ({ context }) => Verifying.passed(context) }
 * ```
 */
export const Verifying = {
  /** The answer being judged is final, and the agent verifies its final answers. */
  answerGoesToVerification(context: ReactContext): boolean {
    return context.validation?.ok === true && context.validation.answer.action === 'final' && verificationOf(context.settings.agent) !== undefined;
  },
  passed(context: ReactContext): boolean {
    const exchange = answered(context);
    return exchange !== undefined && !verificationFailed(exchange);
  },
  /** Failed (it is answered and did not pass: `passed` is tried first), with no verification or iteration left. */
  exhausted(context: ReactContext): boolean {
    return answered(context) !== undefined && outOfVerifications(context);
  },
  /** `verification.requested`, with the ending the answer would have. */
  requested(context: ReactContext): RecordedFact | undefined {
    if (context.validation?.ok !== true) return undefined;
    const candidate = finalAnswerData(context.validation, context.settings.agent.debug, context.settings.rules.outputCheck !== undefined);
    return { type: AgentEventType.VerificationRequested, iteration: context.envelope.state.iteration, data: { candidate } };
  },
  /** The verifier's model request, for the verification waiting for its answer. */
  command(context: ReactContext): TransportCommand {
    const messages = verificationMessages(context.settings.agent, context.envelope, candidateOf(context));
    return { type: 'model.request', request: { traceId: context.settings.traceId, iteration: context.envelope.state.iteration, messages, purpose: 'verification' } };
  },
  /** `verification.completed`: the verifier's answer judged (an unreadable one fails, with its VERIFICATION_INVALID error). */
  completed(context: ReactContext, event: Extract<ReactEvent, { type: 'model.answer' }>): RecordedFact {
    const verdict = validateVerification(event.text);
    const data: VerificationCompletedData = verdict.ok
      ? { passed: verdict.passed, checks: [...verdict.checks], durationMs: event.durationMs }
      : { passed: false, checks: [], error: verdict.error, durationMs: event.durationMs };
    data.attempts = event.attempts;
    if (event.usage !== undefined) data.usage = event.usage;
    return { type: AgentEventType.VerificationCompleted, iteration: context.envelope.state.iteration, data };
  },
  /** The run's ending with the verified answer. */
  verifiedEnding(context: ReactContext): RunEnding {
    return { type: AgentEventType.RunCompleted, data: verifiedEnding(candidateOf(context), answered(context)?.checks ?? [], failedVerifications(context.envelope)) };
  },
  /** The run's ending once out of verifications: done_partial with the last answer and its failed checks. */
  unverifiedEnding(context: ReactContext): RunEnding {
    const exchange = answered(context) ?? { iteration: 0, kind: 'verification', status: 'answered' };
    return { type: AgentEventType.RunCompleted, data: unverifiedEnding(candidateOf(context), exchange, failedVerifications(context.envelope)) };
  },
} as const;
