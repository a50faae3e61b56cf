import type { RunOutcome } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import type { AgentDefinition } from './agentDefinition.js';

/** A run's output for its definition: the value, or why there is none. */
export interface AgentOutput {
  readonly value?: unknown;
  readonly error?: ErrorInfo;
}

/**
 * The output of a run of `definition` that ended with `outcome`. Without an `outputConfig` it is the
 * answer's text (a final answer's, or a stop condition's). With one, the final answer's structured
 * output, which the run checked against `outputConfig.schema` (the agent's `outputSchema`), given to
 * `outputConfig.parse`; an output that did not match, or that `parse` refuses, gives no value and an
 * `AGENT_OUTPUT_INVALID` error saying why (the answer as given stays in the outcome). A run without
 * an answer has no output.
 *
 * @example
 * ```ts
 * outputOf(reviewer, { status: 'done', reason: 'final_answer', answer: '…', output: { verdict: 'ok' }, validated: true }); // { value: { verdict: 'ok' } }
 * ```
 */
export function outputOf(definition: AgentDefinition, outcome: RunOutcome): AgentOutput {
  const config = definition.outputConfig;
  if (config === undefined) {
    const done = outcome.status === 'done' || outcome.status === 'done_partial';
    return done && outcome.answer !== undefined ? { value: outcome.answer } : {};
  }
  // A stop condition's answer is what the run had, not the output the model was asked for.
  if (outcome.status !== 'done' || outcome.reason !== 'final_answer') return {};
  const invalid = (why: string): AgentOutput => ({
    error: errorInfo(ErrorCode.AGENT_OUTPUT_INVALID, `the final answer of agent "${definition.name}" is not the ${config.outputName} asked for: ${why}`, {
      hint: 'the answer as given is in rawContent (and the outcome\'s output); make outputConfig.schema and the prompt clearer, set outputConfig.repair, or use a stronger model',
    }),
  });
  if (outcome.validated !== true) return invalid(outcome.outputErrors?.join('; ') ?? 'it gives no output');
  if (config.parse === undefined) return { value: outcome.output };
  try {
    return { value: config.parse(outcome.output) };
  } catch (error) {
    return invalid(`outputConfig.parse refused it: ${error instanceof Error ? error.message : String(error)}`);
  }
}
