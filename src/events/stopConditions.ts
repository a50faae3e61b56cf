import type { AgentCoreReactConfig, AgentEnvelope } from '../contracts/schema-types.js';

/** The stop conditions an agent may set, defined once. */
export const StopCondition = {
  FinalAnswer: 'final_answer',
  ConfidenceThreshold: 'confidence_threshold',
  IterationLimit: 'iteration_limit',
} as const;

/** The confidence threshold of the agent, if it has one. */
export function confidenceThreshold(agent: AgentCoreReactConfig): number | undefined {
  const condition = agent.stopConditions?.find((c) => c.type === StopCondition.ConfidenceThreshold);
  return typeof condition?.value === 'number' ? condition.value : undefined;
}

/** The iteration at which the run stops: the iteration_limit condition if lower, else maxIterations. */
export function iterationLimit(agent: AgentCoreReactConfig): { readonly limit: number; readonly byCondition: boolean } {
  const condition = agent.stopConditions?.find((c) => c.type === StopCondition.IterationLimit);
  const value = typeof condition?.value === 'number' ? condition.value : undefined;
  if (value !== undefined && value < agent.maxIterations) return { limit: value, byCondition: true };
  return { limit: agent.maxIterations, byCondition: false };
}

/**
 * How many answers that break the answer format a run sends back to the model (`onInvalidAnswer.repair`,
 * 0 by default), and how many it has sent back so far (its `answer_repair` exchanges). Each repair
 * is one more iteration, so it also needs an iteration left under {@link iterationLimit}.
 */
export function answerRepairs(agent: AgentCoreReactConfig, envelope: AgentEnvelope): { readonly allowed: number; readonly used: number } {
  let used = 0;
  for (const exchange of envelope.exchanges ?? []) if (exchange.kind === 'answer_repair') used += 1;
  return { allowed: agent.onInvalidAnswer?.repair ?? 0, used };
}

/** The confidence of the last accepted answer. */
export function lastConfidence(envelope: AgentEnvelope): number | undefined {
  const response = envelope.model?.lastResponse as { confidence?: unknown } | undefined;
  return typeof response?.confidence === 'number' ? response.confidence : undefined;
}
