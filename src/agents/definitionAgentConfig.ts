import type { AgentCoreReactConfig } from '../contracts/schema-types.js';
import { DEFAULT_MAX_TURNS, type AgentDefinition } from './agentDefinition.js';
import type { DefinitionSubagents } from './definitionSubagents.js';
import { requireJsonSchema } from './schemaToJson.js';
import { renderTemplate } from './template.js';

/**
 * The agent config a definition runs with, its prompts filled in.
 *
 * @example
 * ```ts
 * agentConfigOf(definition, { person: 'Ada' }, subagents, '').maxIterations // runConfig.maxTurns, or 5
 * ```
 */
export function agentConfigOf(definition: AgentDefinition, inputs: Readonly<Record<string, unknown>>, subagents: DefinitionSubagents, cycle: string): AgentCoreReactConfig {
  const tools = [...(definition.toolConfig?.tools ?? []), ...subagents.specs];
  const approved = (definition.toolConfig?.tools ?? []).filter((tool) => tool.requiresApproval === true).map((tool) => tool.name);
  const output = definition.outputConfig;
  const instructions = [renderTemplate(definition.promptConfig.systemPrompt, inputs, 'promptConfig.systemPrompt')];
  // The schema itself is in the prompt already (the agent's outputSchema): say what the output is.
  if (output !== undefined) instructions.push(`Your final answer's output is the ${output.outputName}${output.description ? `: ${output.description}` : ''}.`);
  if (cycle !== '') instructions.push(cycle);
  return {
    strategy: 'react',
    maxIterations: definition.runConfig?.maxTurns ?? DEFAULT_MAX_TURNS,
    allowedTools: tools.map((tool) => tool.name),
    instructions: instructions.join('\n\n'),
    ...(approved.length > 0 && { requiresApproval: approved }),
    ...(definition.runConfig?.waitTimeoutMs !== undefined && { waitTimeoutMs: definition.runConfig.waitTimeoutMs }),
    // The model is shown, and the run checks, the schema's JSON Schema: plain data, as the log keeps it.
    ...(output !== undefined && { outputSchema: { ...requireJsonSchema(output.schema) } }),
    ...(output?.repair === true && { outputRepair: true }),
    ...(definition.runConfig?.repairInvalidAnswers !== undefined && { onInvalidAnswer: { repair: definition.runConfig.repairInvalidAnswers } }),
    ...verificationOf(definition),
  };
}

/**
 * The agent's `verification`, when the definition verifies its answers: its runConfig's, with the
 * REACT_CYCLE's Done Criteria added to the criteria the completeness check asks for.
 */
function verificationOf(definition: AgentDefinition): Pick<AgentCoreReactConfig, 'verification'> {
  const verification = definition.runConfig?.verification;
  if (verification === undefined || verification === 'off') return {};
  const done = definition.promptConfig.reactCycle?.doneCriteria ?? [];
  const settings = verification === 'self' ? {} : verification;
  const criteria = [...(settings.criteria ?? []), ...done];
  return { verification: { ...settings, ...(criteria.length > 0 && { criteria }) } };
}
