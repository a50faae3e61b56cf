import type { RunEndedData, RunEnding, RunOutcome } from '../contracts/schema-types.js';
import type { AnswerValidation } from '../validation/validateModelAnswer.js';
import { Outcome } from './outcomes.js';

// The endings a final answer gives (the statechart's `endWith*` actions, and the verifying state's).

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
