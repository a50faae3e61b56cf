import type { ToolSpec } from '../contracts/schema-types.js';
import { compileUserSchema, validators } from '../contracts/schemas.js';
import { defaultAnswerLimits, type AnswerLimits, type AnswerRules } from '../validation/validateModelAnswer.js';

/**
 * Compiles, once per run, what validating an answer needs: the model-response schema, the allowed
 * tools, and each tool's input schema.
 */
export function buildAnswerRules(
  allowedTools: readonly string[],
  tools: readonly ToolSpec[],
  limits: AnswerLimits = defaultAnswerLimits,
): AnswerRules {
  const toolInput = new Map<string, (input: unknown) => true | string>();
  for (const tool of tools) toolInput.set(tool.name, compileUserSchema(tool.inputSchema));
  return { limits, responseSchema: validators.modelResponse, allowedTools: new Set(allowedTools), toolInput };
}
