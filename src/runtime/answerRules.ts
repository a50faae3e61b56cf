import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';
import type { DecisionContract } from '../machines/protocol.js';
import { compileOutputSchema, compileUserSchema, validators } from '../contracts/schemas.js';
import { defaultAnswerLimits, type AnswerLimits, type AnswerRules } from '../validation/validateModelAnswer.js';
import type { TextActionRules } from '../validation/validateTextAnswer.js';

/**
 * Compiles, once per run, what validating an answer needs: the model-response schema, the allowed
 * tools, each tool's input schema, and from the agent its reasoning rule and its outputSchema.
 */
export function buildAnswerRules(
  allowedTools: readonly string[],
  tools: readonly ToolSpec[],
  limits: AnswerLimits = defaultAnswerLimits,
  agent?: Pick<AgentCoreReactConfig, 'reasoning' | 'outputSchema'>,
): AnswerRules {
  const toolInput = new Map<string, (input: unknown) => true | string>();
  for (const tool of tools) toolInput.set(tool.name, compileUserSchema(tool.inputSchema));
  const rules: AnswerRules = { limits, responseSchema: validators.modelResponse, allowedTools: new Set(allowedTools), toolInput };
  if (agent?.reasoning !== 'explicit' && agent?.outputSchema === undefined) return rules;
  return {
    ...rules,
    ...(agent.reasoning === 'explicit' && { explicitReasoning: true }),
    ...(agent.outputSchema !== undefined && { outputCheck: compileOutputSchema(agent.outputSchema) }),
  };
}

/** The rules last built for a list of tool specs, and what they were built from. */
interface CachedRules {
  readonly allowedTools: readonly string[];
  readonly limits: AnswerLimits | undefined;
  readonly reasoning: AgentCoreReactConfig['reasoning'];
  readonly outputSchema: AgentCoreReactConfig['outputSchema'];
  readonly textActions: TextActionRules | undefined;
  readonly rules: AnswerRules;
}

const rulesByTools = new WeakMap<readonly ToolSpec[], CachedRules>();

/**
 * The answer rules of a run of `agent` with `tools` (and `textActions`, when its answers may take
 * the text form): {@link buildAnswerRules}, built once for runs that share their tool list and
 * agent settings, as the runs of one host do: the allowed tools compared by their names (an agent
 * config made per run shares its rules too, instead of holding a Set and a Map of its own: about
 * 0.3 KiB a run), the rest by identity. A tool list is read when it is first seen: give another
 * array rather than changing one in place.
 */
export function answerRulesFor(
  agent: Pick<AgentCoreReactConfig, 'allowedTools' | 'reasoning' | 'outputSchema'>,
  tools: readonly ToolSpec[],
  limits?: AnswerLimits,
  textActions?: TextActionRules,
): AnswerRules {
  const cached = rulesByTools.get(tools);
  if (
    cached !== undefined &&
    sameNames(cached.allowedTools, agent.allowedTools) &&
    cached.limits === limits &&
    cached.reasoning === agent.reasoning &&
    cached.outputSchema === agent.outputSchema &&
    cached.textActions === textActions
  ) {
    return cached.rules;
  }
  const built = buildAnswerRules(agent.allowedTools, tools, limits, agent);
  const rules = textActions === undefined ? built : { ...built, textActions };
  rulesByTools.set(tools, { allowedTools: agent.allowedTools, limits, reasoning: agent.reasoning, outputSchema: agent.outputSchema, textActions, rules });
  return rules;
}

/** True when two lists of tool names are the same names in the same order. */
function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The contract last built for a list of tool specs, and the agent settings it was built from. */
interface CachedContract {
  readonly allowedTools: readonly string[];
  readonly reasoning: AgentCoreReactConfig['reasoning'];
  readonly outputSchema: AgentCoreReactConfig['outputSchema'];
  readonly contract: DecisionContract;
}

const contractByTools = new WeakMap<readonly ToolSpec[], CachedContract>();

/**
 * The decision contract of a run of `agent` with `tools` (only those in its `allowedTools`),
 * built once for the runs that share the tool list and those settings, as the runs of one flow
 * do. A tool list is read when it is first seen: give another array rather than changing one.
 *
 * @example
 * ```ts
 * decisionContractFor({ allowedTools: ['add'] }, [{ name: 'add', description: 'Adds', inputSchema: { type: 'object' } }]).tools[0]?.name; // 'add'
 * ```
 */
export function decisionContractFor(
  agent: Pick<AgentCoreReactConfig, 'allowedTools' | 'reasoning' | 'outputSchema'>,
  tools: readonly ToolSpec[],
): DecisionContract {
  const cached = contractByTools.get(tools);
  if (cached !== undefined && cached.allowedTools === agent.allowedTools && cached.reasoning === agent.reasoning && cached.outputSchema === agent.outputSchema) {
    return cached.contract;
  }
  const allowed = new Set(agent.allowedTools);
  const content = {
    tools: tools.filter((tool) => allowed.has(tool.name)).map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    explicitReasoning: agent.reasoning === 'explicit',
    ...(agent.outputSchema !== undefined && { outputSchema: agent.outputSchema }),
  };
  const contract: DecisionContract = { key: contentKey(JSON.stringify(content)), ...content };
  contractByTools.set(tools, { allowedTools: agent.allowedTools, reasoning: agent.reasoning, outputSchema: agent.outputSchema, contract });
  return contract;
}

/** Two FNV-1a hashes (different offsets) and the length: a cache key, not a security measure. */
function contentKey(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x9e3779b9;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193);
  }
  return `${(a >>> 0).toString(36)}${(b >>> 0).toString(36)}-${text.length.toString(36)}`;
}
