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

/** The confidence of the last accepted answer. */
export function lastConfidence(envelope: AgentEnvelope): number | undefined {
  const response = envelope.model?.lastResponse as { confidence?: unknown } | undefined;
  return typeof response?.confidence === 'number' ? response.confidence : undefined;
}
