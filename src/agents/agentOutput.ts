import type { AgentEnvelope, RunOutcome } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import type { ChatMessage } from '../actors/model.js';
import { buildMessages } from '../machines/prompt.js';
import type { RunResult } from '../runtime/runSession.js';
import type { AgentDefinition } from './agentDefinition.js';
import type { AgentResult } from './agentExecutorTypes.js';
import { checkAgainst, isStandardSchema } from './schemaCheck.js';
import { terminateReasonOf } from './terminateReason.js';

/** A run's output for its definition: the value, or why there is none. */
export interface AgentOutput {
  readonly value?: unknown;
  readonly error?: ErrorInfo;
  /** With an `outputConfig` and a final answer: whether its output is the one asked for. */
  readonly validated?: boolean;
}

/**
 * The output of a run of `definition` that ended with `outcome`. Without an `outputConfig` it is the
 * answer's text (a final answer's, or a stop condition's). With one, the final answer's structured
 * output, which the run checked against the JSON Schema of `outputConfig.schema` (the agent's
 * `outputSchema`), then checked here by the schema itself when it is a Standard Schema (whose
 * value it becomes: parsed, defaults filled in), then given to `outputConfig.parse`. An output
 * that does not match, or that `parse` refuses, gives no value, `validated: false` and an
 * `AGENT_OUTPUT_INVALID` error saying why, each issue with its path (the answer as given stays
 * in the outcome). A run without an answer has no output. Read off the outcome alone, so a
 * resumed run's is checked as the first run's would have been.
 *
 * @example
 * ```ts
 * await outputOf(reviewer, { status: 'done', reason: 'final_answer', answer: '…', output: { verdict: 'ok' }, validated: true }); // { value: { verdict: 'ok' }, validated: true }
 * ```
 */
export async function outputOf(definition: AgentDefinition, outcome: RunOutcome): Promise<AgentOutput> {
  const config = definition.outputConfig;
  if (config === undefined) {
    const done = outcome.status === 'done' || outcome.status === 'done_partial';
    return done && outcome.answer !== undefined ? { value: outcome.answer } : {};
  }
  // A stop condition's answer is what the run had, not the output the model was asked for.
  if (outcome.status !== 'done' || outcome.reason !== 'final_answer') return {};
  const invalid = (why: string): AgentOutput => ({
    validated: false,
    error: errorInfo(ErrorCode.AGENT_OUTPUT_INVALID, `the final answer of agent "${definition.name}" is not the ${config.outputName} asked for: ${why}`, {
      hint: 'the answer as given is in rawContent (and the outcome\'s output); make outputConfig.schema and the prompt clearer, set outputConfig.repair, or use a stronger model',
    }),
  });
  if (outcome.validated !== true) return invalid(outcome.outputErrors?.join('; ') ?? 'it gives no output');
  let value = outcome.output;
  // The run checked the schema's JSON Schema; what only the schema itself can say (a refinement,
  // an async check) is checked here.
  if (isStandardSchema(config.schema)) {
    const checked = await checkAgainst(config.schema, value);
    if (!checked.ok) return invalid(checked.issues.join('; '));
    value = checked.value;
  }
  if (config.parse === undefined) return { value, validated: true };
  try {
    return { value: config.parse(value), validated: true };
  } catch (error) {
    return invalid(`outputConfig.parse refused it: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The conversation as the model last saw it, then its last answer when that is not in it already (a final answer). */
function messagesOf(envelope: AgentEnvelope): ChatMessage[] {
  const prompt = envelope.model?.lastPrompt;
  if (prompt === undefined) return [];
  const messages = buildMessages(prompt, envelope);
  const last = envelope.model?.lastResponse;
  if (last !== undefined && envelope.state.lastAction !== 'tool') {
    messages.push({ role: 'assistant', content: typeof last === 'string' ? last : JSON.stringify(last) });
  }
  return messages;
}

/**
 * Turns a run's result into the definition's {@link AgentResult}.
 *
 * @example
 * ```ts
 * const result = await agentResult(reviewer, await handle.result, logPath);
 * if (result.success) console.log(result.output);
 * ```
 */
export async function agentResult<TOutput>(definition: AgentDefinition<TOutput>, run: RunResult, logPath: string | undefined): Promise<AgentResult<TOutput>> {
  const { outcome, envelope } = run;
  const output = await outputOf(definition as AgentDefinition, outcome);
  const failure = (outcome.error as ErrorInfo | undefined) ?? output.error;
  return {
    success: outcome.status === 'done' && output.error === undefined,
    ...(output.value !== undefined && { output: output.value as TOutput }),
    ...(output.validated !== undefined && { validated: output.validated }),
    rawContent: outcome.answer ?? (outcome.output === undefined ? '' : (JSON.stringify(outcome.output) ?? '')),
    terminateReason: terminateReasonOf(outcome),
    ...(failure !== undefined && { error: failure.message, errorInfo: failure }),
    turnCount: envelope.state.iteration,
    messages: messagesOf(envelope),
    traceId: run.traceId,
    ...(logPath !== undefined && { logPath }),
    outcome,
    envelope,
    lastSeq: run.lastSeq,
  };
}
