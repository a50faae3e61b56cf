import type { DecisionContract, DecisionTool } from '../model.js';
import { nullable, strictSchema } from './strictSchema.js';

type Schema = Readonly<Record<string, unknown>>;

/** The name of the schema (OpenAI's `json_schema.name`) and of Anthropic's forced tool. */
export const DECISION_SCHEMA_NAME = 'react_decision';

/** The one property of the schema's root: strict mode wants an object there, not a choice. */
export const DECISION_ROOT = 'decision';

/**
 * A decision contract compiled into one JSON Schema a provider can hold the model to, with what
 * reading the answer back needs.
 */
export interface DecisionSchema {
  /** `{decision: anyOf[one branch per tool, final, escalate, request_info, delegate]}`, strict-mode ready. */
  readonly schema: Schema;
  /**
   * The tools whose input schema strict mode cannot express: their `input` is asked for as a
   * string holding the JSON object, and parsed back.
   */
  readonly inputAsText: ReadonlySet<string>;
  /** The agent's outputSchema cannot be made strict: a final answer's `output` is asked for as JSON text. */
  readonly outputAsText: boolean;
}

const TEXT = { type: 'string' } as const;
const MAYBE_TEXT = { type: ['string', 'null'] } as const;
const CONFIDENCE = { type: 'number', description: 'how sure you are of this step, between 0 and 1' } as const;
const JSON_TEXT = (what: string) => ({ type: 'string', description: `${what}, written as JSON text` });

/** The decision each action goes with (the core checks the same). */
const DECISION_OF = { tool: 'continue', request_info: 'continue', delegate: 'continue', final: 'done', escalate: 'escalate' } as const;

/** Compiled schemas by contract key; bounded, since a model worker serves many flows. */
const compiled = new Map<string, DecisionSchema>();
const MAX_CACHED = 64;

/**
 * The schema of `contract`, compiled once per contract (by its `key`, so the same flow's requests
 * share one whether they came in-process or over NATS).
 *
 * @example
 * ```ts
 * const { schema } = decisionSchemaFor(request.decision);
 * body.response_format = { type: 'json_schema', json_schema: { name: DECISION_SCHEMA_NAME, strict: true, schema } };
 * ```
 */
export function decisionSchemaFor(contract: DecisionContract): DecisionSchema {
  const cached = compiled.get(contract.key);
  if (cached !== undefined) return cached;
  const made = compileDecisionSchema(contract);
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(contract.key, made);
  return made;
}

/**
 * Compiles `contract` (uncached: see {@link decisionSchemaFor}). Each branch lists its properties
 * in the order the model should write them: the thought first, when the agent reasons explicitly.
 *
 * @example
 * ```ts
 * compileDecisionSchema({ key: 'k', tools: [], explicitReasoning: false }).schema.required; // ['decision']
 * ```
 */
export function compileDecisionSchema(contract: DecisionContract): DecisionSchema {
  const inputAsText = new Set<string>();
  const branches: Schema[] = contract.tools.map((tool) => toolBranch(tool, contract, inputAsText));
  const output = contract.outputSchema === undefined ? undefined : strictSchema(contract.outputSchema);
  const outputAsText = contract.outputSchema !== undefined && output === undefined;
  const final: Record<string, Schema> =
    contract.outputSchema === undefined
      ? { message: { ...TEXT, description: 'the answer itself' }, confidence: CONFIDENCE }
      : { message: MAYBE_TEXT, output: output === undefined ? JSON_TEXT('the output matching the output schema') : nullable(output), confidence: CONFIDENCE };
  branches.push(
    branch('final', final, contract),
    branch('escalate', { input: object({ reason: TEXT, question: TEXT, context: MAYBE_TEXT }), confidence: CONFIDENCE }, contract),
    branch('request_info', { input: object({ question: TEXT, context: MAYBE_TEXT }), confidence: CONFIDENCE }, contract),
    branch('delegate', { input: object({ agent_id: TEXT, task: TEXT }), confidence: CONFIDENCE }, contract),
  );
  return { schema: object({ [DECISION_ROOT]: { anyOf: branches } }), inputAsText, outputAsText };
}

function toolBranch(tool: DecisionTool, contract: DecisionContract, inputAsText: Set<string>): Schema {
  let input = strictSchema(tool.inputSchema);
  if (input === undefined || input.type !== 'object') {
    inputAsText.add(tool.name);
    input = JSON_TEXT(`the input object of ${tool.name}`);
  }
  return branch('tool', { tool: { type: 'string', enum: [tool.name] }, input, confidence: CONFIDENCE, message: MAYBE_TEXT }, contract);
}

/** One action's branch, with the reasoning fields when the agent reasons explicitly. */
function branch(action: keyof typeof DECISION_OF, fields: Record<string, Schema>, contract: DecisionContract): Schema {
  const head: Record<string, Schema> = contract.explicitReasoning ? { thought: TEXT, reflection: MAYBE_TEXT } : {};
  const tail: Record<string, Schema> = contract.explicitReasoning ? { decision: { type: ['string', 'null'], enum: [DECISION_OF[action], null] }, reason: MAYBE_TEXT } : {};
  return object({ ...head, action: { type: 'string', enum: [action] }, ...fields, ...tail });
}

function object(properties: Record<string, Schema>): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}
