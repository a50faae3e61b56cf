import type { AnswerRejectedData, RunEndedData, RunOutcome } from '../contracts/schema-types.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { evolve } from '../events/evolve.js';
import { budgetExhausted, budgetStop, inputTokensOf, meteredUsage } from './contextBudget.js';
import { modelIdentity } from './modelSwitch.js';
import { nextCallBudgetStop, nextRequestTokens } from './prompt.js';
import type { ReactContext, ReactEvent } from './reactTypes.js';
import { lastVerification, Verifying } from './verification.js';

// The budget checks of the calls that are not a new iteration's: a repair's re-ask (the answer
// or its output rejected) and the verifier's call (docs/budgets.md). Each is checked as a new
// model call is: against what is spent and against its own input's estimate, counted on the
// envelope as it will be once the fact that leads to the call is recorded.

/** Most of a rejected answer `answer.rejected` keeps (and the model is shown again): the log holds the whole in `model.answered`. */
const REJECTED_TEXT_CHARS = 2_000;

/**
 * The `answer.rejected` fact for the answer being judged, or undefined when it is valid.
 *
 * @example
 * ```ts
 * const fact = answerRejectedFact(context); // { type: 'answer.rejected', iteration: 2, data: { text, error } }
 * ```
 */
export function answerRejectedFact(context: ReactContext): RecordedFact | undefined {
  if (context.validation?.ok !== false) return undefined;
  // The answer as `model.answered` logged it (its thought already out), so the log says nothing twice that it hid once.
  const logged = context.envelope.model?.lastResponse;
  const text = typeof logged === 'string' ? logged : '';
  const length = context.answerLength ?? text.length;
  const data: AnswerRejectedData = { text: text.slice(0, REJECTED_TEXT_CHARS), error: context.validation.error };
  if (length > REJECTED_TEXT_CHARS) data.originalLength = length;
  return { type: AgentEventType.AnswerRejected, iteration: context.envelope.state.iteration, data };
}

/**
 * The `output.rejected` fact for a valid answer whose output failed its schema.
 *
 * @example
 * ```ts
 * outputRejectedFact(context); // { type: 'output.rejected', iteration: 2, data: { output, errors } }
 * ```
 */
export function outputRejectedFact(context: ReactContext): RecordedFact {
  const output = context.validation?.ok === true ? context.validation.output : undefined;
  return { type: AgentEventType.OutputRejected, iteration: context.envelope.state.iteration, data: { output: output?.value ?? null, errors: [...(output?.errors ?? [])] } };
}

/**
 * Why the repair's re-ask may not be made (the budget spent, or the re-ask's input alone
 * overspends it), or undefined. The re-ask shows the model its rejected answer, so its input is
 * counted on the envelope with the rejection recorded.
 *
 * @example
 * ```ts
 * repairBudgetStop(context); // "the next model call's input alone is about 530 tokens, and 212 … are left"
 * ```
 */
export function repairBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  if (budget === undefined) return undefined;
  const rejection = answerRejectedFact(context) ?? outputRejectedFact(context);
  const rejected = evolve(context.envelope, rejection);
  return budgetStop(budget, rejected, nextRequestTokens(context, rejected));
}

/**
 * Why the verifier's call may not be made, or undefined: counted like any model call, with the
 * verifier's messages as its input (docs/verification.md). On entering verification (the answer
 * is final) it is counted on the envelope with `verification.requested` recorded; on a resume into
 * a pending verification, on the envelope as logged.
 *
 * @example
 * ```ts
 * verificationBudgetStop(context); // "the run spent 1000 tokens of its budget.maxTokens 1000"
 * ```
 */
export function verificationBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  if (budget === undefined) return undefined;
  const requested = Verifying.answerGoesToVerification(context) ? Verifying.requested(context) : undefined;
  const envelope = requested === undefined ? context.envelope : evolve(context.envelope, requested);
  return budgetStop(budget, envelope, verificationInputTokens({ ...context, envelope }));
}

/**
 * The input tokens of the verifier's request for the pending verification; 0 without a budget.
 *
 * @example
 * ```ts
 * verificationInputTokens(context); // 612
 * ```
 */
export function verificationInputTokens(context: ReactContext): number {
  const { budget } = context.settings;
  const command = Verifying.command(context);
  if (budget === undefined || command.type !== 'model.request') return 0;
  return inputTokensOf(command.request.messages, budget);
}

/**
 * `verification.completed` metered as `model.answered` is in a run with a budget: the provider's
 * usage or the tokenizer's estimate of the verifier's request and answer, priced by the model
 * that answered (a verifier of its own has its own price), so the fold counts it in what the run spent.
 *
 * @example
 * ```ts
 * record(meteredVerification(context, event, Verifying.completed(context, event)));
 * ```
 */
export function meteredVerification(context: ReactContext, event: Extract<ReactEvent, { type: 'model.answer' }>, fact: RecordedFact): RecordedFact {
  const { budget } = context.settings;
  if (budget === undefined || fact.type !== AgentEventType.VerificationCompleted) return fact;
  const inputTokens = event.usage === undefined ? verificationInputTokens(context) : 0;
  const usage = meteredUsage(budget, event.usage, inputTokens, event.text, modelIdentity(event.answeredBy)?.model ?? budget.model);
  return { ...fact, data: { ...fact.data, usage } };
}

/** Which call a budget check stops: the next iteration's, a repair's re-ask, or the verifier's. */
export type BudgetedCall = 'next' | 'repair' | 'verification';

/**
 * Why the run's budget stops `call`, for the `budget_exhausted` ending's message.
 *
 * @example
 * ```ts
 * budgetStopOf(context, 'verification') ?? 'the budget is spent';
 * ```
 */
export function budgetStopOf(context: ReactContext, call: BudgetedCall): string | undefined {
  if (call === 'repair') return repairBudgetStop(context);
  if (call === 'verification') return verificationBudgetStop(context);
  return nextCallBudgetStop(context);
}

/**
 * The ending of a run whose budget refuses `call`. A final answer the verifier could not be asked
 * about is kept, unverified: `done_partial` with it as the answer (it is paid for); any other
 * call ends as a budget ends a run (src/machines/contextBudget.ts).
 *
 * @example
 * ```ts
 * budgetEnding(context, 'verification'); // { status: 'done_partial', reason: 'budget_exhausted', answer: '12.5', error }
 * ```
 */
export function budgetEnding(context: ReactContext, why: string, call: BudgetedCall): RunOutcome {
  const outcome = budgetExhausted(why, context.envelope);
  if (call !== 'verification') return outcome;
  const requested = Verifying.answerGoesToVerification(context) ? (Verifying.requested(context)?.data as { candidate?: RunEndedData } | undefined) : undefined;
  const candidate = requested?.candidate ?? (lastVerification(context.envelope)?.output as RunEndedData | undefined);
  const answer = candidate?.outcome.answer;
  const output = candidate?.outcome.output;
  if (answer === undefined && output === undefined) return outcome;
  return {
    status: 'done_partial',
    reason: 'budget_exhausted',
    ...(answer !== undefined && { answer }),
    ...(output !== undefined && { output }),
    detail: 'the final answer was not verified: the verifier\'s call did not fit the budget',
    ...(outcome.error !== undefined && { error: outcome.error }),
  };
}
