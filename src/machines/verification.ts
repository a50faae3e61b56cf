import type { AgentCoreReactConfig, AgentEnvelope, Exchange, RunEndedData, RunEnding, RunOutcome, VerificationCheck, VerificationCompletedData } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { iterationLimit } from '../events/stopConditions.js';
import { evolve } from '../events/evolve.js';
import { budgetExhausted, budgetStop, inputTokensOf, meteredUsage } from './contextBudget.js';
import { finalAnswerData } from './outcomes.js';
import { modelIdentity } from './modelSwitch.js';
import type { ChatMessage } from './protocol.js';
import type { ReactContext, ReactEvent, TransportCommand } from './reactTypes.js';

// Verification before the final answer (docs/verification.md): what the `verifying` state asks
// the verifier, and the endings it decides. Pure: everything is read off the agent and the envelope,
// so a resumed run asks and decides the same.

/** Failed verifications before the run ends done_partial, when the agent does not say. */
export const DEFAULT_MAX_VERIFICATION_FAILURES = 2;

/** Most of one observation (or of the answer) put in the verifier's prompt. */
const MAX_SHOWN_CHARS = 4_000;

/** How an agent verifies its final answer, its defaults applied. */
export interface VerificationSettings {
  readonly rubric?: string;
  /** What must hold for the answer to be complete (an `.agent.md` file's Done Criteria). */
  readonly criteria: readonly string[];
  readonly maxFailures: number;
  /** The verifier model, when it is not the run's own: a model.llm node's id or inline settings. */
  readonly model?: NonNullable<Exclude<AgentCoreReactConfig['verification'], string | undefined>['model']>;
}

/**
 * The agent's verification settings, or `undefined` when it does not verify (`verification`
 * absent or "off").
 *
 * @example
 * ```ts
 * verificationOf({ strategy: 'react', maxIterations: 5, allowedTools: [], verification: 'self' })?.maxFailures // 2
 * ```
 */
export function verificationOf(agent: Pick<AgentCoreReactConfig, 'verification'>): VerificationSettings | undefined {
  const { verification } = agent;
  if (verification === undefined || verification === 'off') return undefined;
  if (verification === 'self') return { criteria: [], maxFailures: DEFAULT_MAX_VERIFICATION_FAILURES };
  return {
    ...(verification.model !== undefined && { model: verification.model }),
    ...(verification.rubric !== undefined && { rubric: verification.rubric }),
    criteria: verification.criteria ?? [],
    maxFailures: verification.maxFailures ?? DEFAULT_MAX_VERIFICATION_FAILURES,
  };
}

/** The last exchange when it is a verification (pending, or just answered). */
export function lastVerification(envelope: AgentEnvelope): Exchange | undefined {
  const exchanges = envelope.exchanges ?? [];
  const last = exchanges[exchanges.length - 1];
  return last?.kind === 'verification' ? last : undefined;
}

/** True when a verification exchange failed: a check failed, or the verifier's answer could not be read. */
export function verificationFailed(exchange: Exchange): boolean {
  return exchange.status === 'answered' && (exchange.error !== undefined || (exchange.checks ?? []).some((check) => !check.passed));
}

/** How many verifications of the run failed so far. */
export function failedVerifications(envelope: AgentEnvelope): number {
  return (envelope.exchanges ?? []).filter((exchange) => exchange.kind === 'verification' && verificationFailed(exchange)).length;
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)} […]` : text;
}

function bullets(items: readonly string[]): string {
  return items.map((item) => `- ${item}`).join('\n');
}

/** What the run observed: each tool call with its result, and each person's answer. */
function observations(envelope: AgentEnvelope): string[] {
  const seen: string[] = [];
  for (const call of envelope.tools.history) {
    const result = call.status === 'succeeded' ? shown(call.output) : call.status === 'failed' ? `failed: ${call.error?.code ?? ''} ${call.error?.message ?? ''}` : 'no result';
    seen.push(`iteration ${call.iteration}: ${call.tool}(${shown(call.input)}) → ${result}`);
  }
  for (const exchange of envelope.exchanges ?? []) {
    if ((exchange.kind === 'escalate' || exchange.kind === 'request_info') && exchange.answer !== undefined) {
      seen.push(`iteration ${exchange.iteration}: a person was asked ${shown(exchange.question ?? '')} and answered ${shown(exchange.answer)}`);
    }
  }
  return seen;
}

/**
 * The verifier's request: a system prompt with the four checks (the completeness check asking for
 * each done criterion, then the rubric) and the shape to answer in, and a user message with the
 * run's input, the agent's instructions, its observations, the output contract and the answer.
 *
 * @example
 * ```ts
 * const [system, user] = verificationMessages(agent, envelope, candidate);
 * system.content.includes('completeness') // true
 * ```
 */
export function verificationMessages(agent: AgentCoreReactConfig, envelope: AgentEnvelope, candidate: RunEndedData): readonly ChatMessage[] {
  const settings = verificationOf(agent) ?? { criteria: [], maxFailures: DEFAULT_MAX_VERIFICATION_FAILURES };
  const completeness =
    settings.criteria.length === 0
      ? '- completeness: does the answer do everything the task asks?'
      : `- completeness: does the answer do everything the task asks? It is complete only when all of these hold:\n${bullets(settings.criteria.map((item) => `  ${item}`))}`;
  const system = [
    "You verify an agent's final answer before it is submitted. Hold it to the task, the agent's instructions, the observations and the output contract below, and answer four checks:",
    completeness,
    '- consistency: does it agree with itself and with the observations?',
    '- correctness: does every claim rest on the observations or the task, with nothing made up?',
    "- constraints: does it keep the agent's instructions and the output contract?",
    ...(settings.rubric === undefined ? [] : [`Hold it also to this rubric:\n${settings.rubric}`]),
    `Answer with one JSON object and nothing else, each check once, "passed" true or false and "basis" saying what it rests on:\n${VERIFICATION_SHAPE}`,
  ].join('\n');
  const seen = observations(envelope);
  const { outcome } = candidate;
  const answer = [...(outcome.answer === undefined ? [] : [shown(outcome.answer)]), ...(outcome.output === undefined ? [] : [`output: ${shown(outcome.output)}`])];
  const user = [
    `Task:\n${shown(envelope.input)}`,
    ...(agent.instructions === undefined ? [] : [`Agent instructions:\n${agent.instructions}`]),
    `Observations:\n${seen.length === 0 ? '(none: no tool was called)' : bullets(seen)}`,
    `Output contract:\n${agent.outputSchema === undefined ? 'a text answer' : `the output must match this JSON Schema: ${JSON.stringify(agent.outputSchema)}`}`,
    `Answer to verify:\n${answer.length === 0 ? '(empty)' : answer.join('\n')}`,
  ].join('\n\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

/**
 * A failed verification as the model sees it next: its answer, then the failed checks (or why the
 * verification could not be read), and the ask to revise before submitting.
 *
 * @example
 * ```ts
 * verificationObservation(exchange)[1]?.content // 'Your final answer failed verification:\n- correctness: …'
 * ```
 */
export function verificationObservation(exchange: Exchange): readonly ChatMessage[] {
  const outcome = (exchange.output as RunEndedData | undefined)?.outcome;
  const answer: Record<string, unknown> = { action: 'final' };
  if (outcome?.answer !== undefined) answer.message = outcome.answer;
  if (outcome?.output !== undefined) answer.output = outcome.output;
  const failed = (exchange.checks ?? []).filter((check) => !check.passed);
  const why =
    exchange.error !== undefined
      ? `Your final answer could not be verified: ${exchange.error.message}.`
      : `Your final answer failed verification:\n${bullets(failed.map((check) => `${check.name}: ${check.basis}`))}`;
  return [
    { role: 'assistant', content: JSON.stringify(answer) },
    { role: 'user', content: `${why}\nRevise it before submitting: take another step if you need one, then answer again with a final answer.` },
  ];
}

/**
 * The ending of a verified answer: the candidate's, with the verification in its outcome.
 *
 * @example
 * ```ts
 * verifiedEnding(candidate, checks, 0).outcome.verification // { passed: true, checks, failures: 0 }
 * ```
 */
export function verifiedEnding(candidate: RunEndedData, checks: readonly VerificationCheck[], failures: number): RunEndedData {
  return { ...candidate, outcome: { ...candidate.outcome, verification: { passed: true, checks: checks.slice(), failures } } };
}

/**
 * The ending once the verifications run out: done_partial with the last answer and its failed
 * checks (`verification_failed`), coded VERIFICATION_FAILED.
 *
 * @example
 * ```ts
 * unverifiedEnding(candidate, checks, 2).outcome.status // 'done_partial'
 * ```
 */
export function unverifiedEnding(candidate: RunEndedData, exchange: Exchange, failures: number): RunEndedData {
  const checks = exchange.checks ?? [];
  const failed = checks.filter((check) => !check.passed).map((check) => check.name);
  const what = exchange.error !== undefined ? 'its last verification could not be read' : `it failed ${failed.join(', ')}`;
  const { answer, output } = candidate.outcome;
  const data: RunEndedData = {
    outcome: {
      status: 'done_partial',
      reason: 'verification_failed',
      ...(answer !== undefined && { answer }),
      ...(output !== undefined && { output }),
      detail: `the answer failed ${failures} verification${failures === 1 ? '' : 's'}: ${what}`,
      error: errorInfo(ErrorCode.VERIFICATION_FAILED, `the final answer was not verified after ${failures} attempt${failures === 1 ? '' : 's'}: ${what}`, {
        hint: "read the failed checks in the outcome's verification; raise verification.maxFailures (or maxIterations) if revising could fix them",
      }),
      verification: { passed: false, checks: checks.slice(), failures },
    },
  };
  if (candidate.confidence !== undefined) data.confidence = candidate.confidence;
  return data;
}

// The verifier's answer, judged (pure and deterministic: a resumed run judges a logged answer the same way).

/** The four checks of a verification, in the order the verifier is asked them (a Chain of Verification). */
export const VERIFICATION_CHECKS = ['completeness', 'consistency', 'correctness', 'constraints'] as const;

/** One of {@link VERIFICATION_CHECKS}. */
export type VerificationCheckName = (typeof VERIFICATION_CHECKS)[number];

/** A verifier's answer judged: its four checks (and whether all passed), or why it is not the verification shape. */
export type VerificationVerdict =
  | { readonly ok: true; readonly passed: boolean; readonly checks: readonly VerificationCheck[] }
  | { readonly ok: false; readonly error: ErrorInfo };

/** The shape the verifier answers in, as its prompt shows it (and this file's errors quote it). */
export const VERIFICATION_SHAPE =
  '{"checks":[{"name":"completeness","passed":true,"basis":"…"},{"name":"consistency","passed":true,"basis":"…"},{"name":"correctness","passed":true,"basis":"…"},{"name":"constraints","passed":false,"basis":"…"}]}';

/** Most of an answer an error message quotes. */
const QUOTED_CHARS = 200;

/** A model may wrap its JSON in a Markdown code fence: the JSON inside it. */
const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

function invalid(message: string): VerificationVerdict {
  return { ok: false, error: errorInfo(ErrorCode.VERIFICATION_INVALID, message, { hint: `the verifier must answer with one JSON object: ${VERIFICATION_SHAPE}` }) };
}

function quoted(text: string): string {
  return JSON.stringify(text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Judges a verifier's answer: one JSON object whose `checks` hold each of the four checks once,
 * each with `passed` (a boolean) and `basis` (what it rests on, not empty). Anything else is a
 * `VERIFICATION_INVALID` error saying what is wrong: a verification that cannot be read fails.
 * Pure and deterministic, so a resumed run judges a logged answer the same way.
 *
 * @example
 * ```ts
 * const verdict = validateVerification('{"checks":[{"name":"completeness","passed":true,"basis":"all files scanned"}]}');
 * verdict.ok // false: consistency, correctness and constraints are missing
 * ```
 */
export function validateVerification(text: string): VerificationVerdict {
  const trimmed = text.trim();
  const json = FENCED.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return invalid(`the verifier's answer is not JSON: ${quoted(trimmed)}`);
  }
  if (!isObject(value) || !Array.isArray(value.checks)) return invalid(`the verifier's answer has no "checks" array: ${quoted(trimmed)}`);
  const checks: VerificationCheck[] = [];
  const seen = new Set<string>();
  for (const [i, check] of value.checks.entries()) {
    if (!isObject(check)) return invalid(`checks[${i}] is not an object`);
    const { name, passed, basis } = check;
    if (typeof name !== 'string' || !(VERIFICATION_CHECKS as readonly string[]).includes(name)) {
      return invalid(`checks[${i}] has the name ${JSON.stringify(name)}, not one of ${VERIFICATION_CHECKS.join(', ')}`);
    }
    if (seen.has(name)) return invalid(`the check "${name}" is answered twice`);
    if (typeof passed !== 'boolean') return invalid(`the check "${name}" has no boolean "passed"`);
    if (typeof basis !== 'string' || basis.trim() === '') return invalid(`the check "${name}" does not say what it rests on (an empty "basis")`);
    seen.add(name);
    checks.push({ name: name as VerificationCheckName, passed, basis });
  }
  const missing = VERIFICATION_CHECKS.filter((name) => !seen.has(name));
  if (missing.length > 0) return invalid(`the verifier's answer lacks the check${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  return { ok: true, passed: checks.every((check) => check.passed), checks };
}

// The `verifying` and `checkingVerification` states' guards and actions, as plain functions of the context.

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
    // A verifier model of the agent's own (`verification.model`) says which model it is.
    const verifier = verificationOf(context.settings.agent)?.model === undefined ? undefined : modelIdentity(event.answeredBy);
    if (verifier !== undefined) data.model = verifier;
    return { type: AgentEventType.VerificationCompleted, iteration: context.envelope.state.iteration, data };
  },
  // The verifier's call to the run's budget (docs/budgets.md): metered, and checked before it is made, as any model call.
  /** The envelope with the verification pending: as logged on a resume into it, else with `verification.requested` recorded. */
  pending(context: ReactContext): AgentEnvelope {
    const requested = Verifying.answerGoesToVerification(context) ? Verifying.requested(context) : undefined;
    return requested === undefined ? context.envelope : evolve(context.envelope, requested);
  },
  /** Why the budget refuses the verifier's call (spent, or its request's input alone overspends), or undefined. */
  budgetStop(context: ReactContext): string | undefined {
    const { budget } = context.settings;
    if (budget === undefined) return undefined;
    const envelope = Verifying.pending(context);
    return budgetStop(budget, envelope, inputTokensOf(verificationMessages(context.settings.agent, envelope, candidateOf({ ...context, envelope })), budget));
  },
  /** `verification.completed` metered as `model.answered` is in a budgeted run: priced as the model that verified. */
  metered(context: ReactContext, event: Extract<ReactEvent, { type: 'model.answer' }>, fact: RecordedFact): RecordedFact {
    const { budget } = context.settings;
    if (budget === undefined || fact.type !== AgentEventType.VerificationCompleted) return fact;
    const inputTokens = event.usage === undefined ? inputTokensOf(verificationMessages(context.settings.agent, context.envelope, candidateOf(context)), budget) : 0;
    return { ...fact, data: { ...fact.data, usage: meteredUsage(budget, event.usage, inputTokens, event.text, modelIdentity(event.answeredBy)?.model ?? budget.model) } };
  },
  /** The ending when the budget refuses the verifier's call: the final answer kept, unverified (it is paid for). */
  budgetEnding(context: ReactContext, why: string): RunOutcome {
    const { answer, output } = candidateOf({ ...context, envelope: Verifying.pending(context) }).outcome;
    const outcome = budgetExhausted(why, context.envelope);
    if (answer === undefined && output === undefined) return outcome;
    const detail = "the final answer was not verified: the verifier's call did not fit the budget";
    return { status: 'done_partial', reason: 'budget_exhausted', ...(answer !== undefined && { answer }), ...(output !== undefined && { output }), detail, ...(outcome.error && { error: outcome.error }) };
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
