import type { AgentEnvelope, Handoff, HumanQuestion, RunEndedData, RunEnding, RunOutcome, ToolCall } from '../contracts/schema-types.js';
import type { AnswerValidation } from '../validation/validateModelAnswer.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';

/**
 * The ways a run ends, as {@link RunOutcome}s (see docs/architecture.md). `status` is the run's exit
 * state: done (final answer), done_partial (a stop condition), escalate (iteration limit, or a
 * question to a person nobody answered), delegate (the task handed to another agent), blocked
 * (errors); `reason` says which way it got there.
 *
 * @example
 * ```ts
 * const outcome = Outcome.finalAnswer('Order A-1001 shipped.'); // { status: 'done', reason: 'final_answer', answer: 'Order A-1001 shipped.' }
 * ```
 */
export const Outcome = {
  finalAnswer(answer: string | undefined): RunOutcome {
    return answer === undefined ? { status: 'done', reason: 'final_answer' } : { status: 'done', reason: 'final_answer', answer };
  },
  /**
   * A final answer with a structured output. With an outputSchema, `validated` says whether the
   * output matches it (and `outputErrors` what does not): an invalid output never fails the run.
   */
  structuredAnswer(answer: string, output: unknown, errors: readonly string[] | undefined, checked: boolean): RunOutcome {
    const outcome: RunOutcome = { status: 'done', reason: 'final_answer', answer, output };
    if (checked) outcome.validated = errors === undefined;
    if (errors !== undefined) outcome.outputErrors = [...errors];
    return outcome;
  },
  /**
   * The model asked a person (escalate, request_info) and no answer came: the wait's deadline
   * passed, or the host could not wait. The question is the outcome, for a person to take up.
   */
  unanswered(question: HumanQuestion): RunOutcome {
    const asked = question.question.length > 200 ? `${question.question.slice(0, 200)}…` : question.question;
    return {
      status: 'escalate',
      reason: question.action === 'escalate' ? 'escalated' : 'info_requested',
      question,
      error: errorInfo(ErrorCode.HUMAN_ANSWER_MISSING, `the run asked a person ${JSON.stringify(asked)} and no answer came`, {
        hint: "answer while the run waits (redflow answer, POST /api/runs/<traceId>/answer), or raise the agent's waitTimeoutMs",
      }),
    };
  },
  /** The model handed its task to another agent: the handoff is the outcome, for whoever runs that agent. */
  delegated(handoff: Handoff, message: string | undefined): RunOutcome {
    const outcome: RunOutcome = { status: 'delegate', reason: 'delegated', handoff };
    if (message !== undefined) outcome.answer = message;
    return outcome;
  },
  /** The answer is what the run has (see {@link partialAnswer}); why it stopped is in `reason` and `detail`. */
  confidenceReached(threshold: number, confidence: number, envelope: AgentEnvelope): RunOutcome {
    return {
      status: 'done_partial',
      reason: 'confidence_threshold',
      answer: partialAnswer(envelope),
      detail: `stopped after a tool call: its confidence ${confidence} reached the confidence_threshold ${threshold}`,
    };
  },
  iterationLimit(limit: number, byCondition: boolean): RunOutcome {
    const why = byCondition ? `the iteration_limit stop condition (${limit})` : `maxIterations (${limit})`;
    // Name the setting that stopped the run: raising maxIterations past a lower condition changes nothing.
    const raise = byCondition
      ? "raise the iteration_limit stop condition's value (at most maxIterations), or remove that condition,"
      : 'raise maxIterations (at most 20)';
    return {
      status: 'escalate',
      reason: 'iteration_limit',
      error: errorInfo(ErrorCode.ITERATION_OVERFLOW, `no final answer after ${limit} iterations: reached ${why}`, {
        hint: `a person should look at this run; ${raise} if the task needs more steps`,
      }),
    };
  },
  invalidAnswer(error: ErrorInfo): RunOutcome {
    return { status: 'blocked', reason: 'invalid_answer', error };
  },
  modelFailed(error: ErrorInfo): RunOutcome {
    return { status: 'blocked', reason: 'model_error', error };
  },
  /**
   * The conversation's memory could not be saved: the run is blocked (the next turn would not see
   * this one), and keeps the answer it had decided, if any.
   */
  memoryFailed(error: ErrorInfo, decided: RunOutcome | undefined): RunOutcome {
    const outcome: RunOutcome = { status: 'blocked', reason: 'memory_error', error };
    if (decided?.answer !== undefined) outcome.answer = decided.answer;
    return outcome;
  },
  timedOut(timeoutMs: number | undefined): RunOutcome {
    return {
      status: 'blocked',
      reason: 'timeout',
      error: errorInfo(ErrorCode.RUN_TIMEOUT, timeoutMs === undefined ? 'the run timed out' : `the run did not finish within ${timeoutMs} ms`, {
        hint: 'raise the run timeout, or resume the run from its log',
      }),
    };
  },
  /** Nobody answered the wait in time: a person's approval, or a client tool's result. */
  waitExpired(kind: 'approval' | 'client', tool: string, timeoutMs: number): RunOutcome {
    const what = kind === 'approval' ? `an approval of the call to ${tool}` : `the result of ${tool}, which the client runs`;
    return {
      status: 'blocked',
      reason: 'wait_expired',
      error: errorInfo(ErrorCode.WAIT_EXPIRED, `the run waited ${timeoutMs} ms for ${what}, and none came`, {
        hint: "answer sooner, or raise the agent's waitTimeoutMs",
      }),
    };
  },
  aborted(reason: string | undefined): RunOutcome {
    return {
      status: 'blocked',
      reason: 'aborted',
      error: errorInfo(ErrorCode.RUN_ABORTED, reason ? `the run was aborted: ${reason}` : 'the run was aborted'),
    };
  },
} as const;

/** The data of `run.completed` for a final answer (the thought only in debug; the output checked when the agent has an outputSchema). */
export function finalAnswerData(validation: Extract<AnswerValidation, { ok: true }>, debug: boolean | undefined, checked: boolean): RunEndedData {
  const { answer, output } = validation;
  const data: RunEndedData = {
    outcome:
      output === undefined
        ? Outcome.finalAnswer(answer.message)
        : Outcome.structuredAnswer(answer.message ?? JSON.stringify(output.value) ?? '', output.value, output.errors, checked),
  };
  if (answer.confidence !== undefined) data.confidence = answer.confidence;
  if (debug && answer.thought !== undefined) data.thought = answer.thought;
  return data;
}

/** A run that ends with `outcome`: `run.completed` when it produced what it could, else `run.failed`. */
export function ending(type: RunEnding['type'], outcome: RunOutcome): RunEnding {
  return { type, data: { outcome } };
}

/** The longest piece (the model's message, the tool's output) a partial answer keeps, in characters. */
export const PARTIAL_ANSWER_PART_MAX_CHARS = 4_000;

/**
 * What a run stopped by a stop condition has to say: the model's message of its last tool call, if
 * any, then that call's output as text (or its failure), each cut to
 * {@link PARTIAL_ANSWER_PART_MAX_CHARS}. Pure: computed from the envelope alone, so a replay or a
 * resumed run gets the same answer. The model's `thought` is never part of it.
 *
 * @example
 * ```ts
 * partialAnswer(envelope); // 'Found it.\n\nlookup_order: {"orderId":"A-1001","status":"shipped"}'
 * ```
 */
export function partialAnswer(envelope: AgentEnvelope): string {
  const parts: string[] = [];
  const response = envelope.model?.lastResponse as { message?: unknown } | undefined;
  if (typeof response?.message === 'string' && response.message.trim() !== '') parts.push(cut(response.message));
  const call = envelope.tools.history[envelope.tools.history.length - 1];
  if (call) parts.push(callText(call));
  return parts.length > 0 ? parts.join('\n\n') : 'no tool output';
}

function callText(call: ToolCall): string {
  if (call.status === 'failed') {
    const error = call.error ? `${call.error.code}: ${call.error.message}` : 'no details';
    return `${call.tool} failed: ${cut(error)}`;
  }
  if (call.status === 'requested') return `${call.tool}: no result`;
  return `${call.tool}: ${cut(outputText(call.output))}`;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '(no output)';
  return JSON.stringify(output) ?? String(output);
}

/** `text` cut to the limit, never through a surrogate pair, saying how long it was. */
function cut(text: string): string {
  if (text.length <= PARTIAL_ANSWER_PART_MAX_CHARS) return text;
  let end = PARTIAL_ANSWER_PART_MAX_CHARS;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… (cut: ${text.length} characters in all)`;
}
