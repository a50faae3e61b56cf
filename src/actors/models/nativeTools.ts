import type { DecisionContract } from '../model.js';
import { cleanObject } from './decisionAnswer.js';

type Schema = Readonly<Record<string, unknown>>;

/** A function offered to the model through its provider's native tool calling. */
export interface NativeFunction {
  readonly name: string;
  readonly description: string;
  /** The tool's input schema with the arguments the core asks for besides (confidence, reasoning). */
  readonly parameters: Schema;
}

/** One tool call as the model made it: the function's name and its arguments as JSON text. */
export interface NativeCall {
  readonly name: string;
  readonly arguments: string;
}

/** The function a final answer may come through, besides plain text. */
export const FINAL_ANSWER_FUNCTION = 'final_answer';

/** The actions other than a tool call, each offered as a function (unless a tool has its name). */
const ACTION_FUNCTIONS: readonly NativeFunction[] = [
  { name: FINAL_ANSWER_FUNCTION, description: 'Give the final answer to the user (you may also answer in plain text).', parameters: objectOf({ message: { type: 'string', description: 'the answer itself' } }, ['message']) },
  {
    name: 'escalate',
    description: 'A person must decide (an ambiguity, a business decision, a risk); you get their answer.',
    parameters: objectOf({ reason: { type: 'string' }, question: { type: 'string' }, context: { type: 'string' } }, ['reason', 'question']),
  },
  { name: 'request_info', description: 'Information only the user has is missing; you get their answer.', parameters: objectOf({ question: { type: 'string' }, context: { type: 'string' } }, ['question']) },
  { name: 'delegate', description: 'Another agent must do the task.', parameters: objectOf({ agent_id: { type: 'string' }, task: { type: 'string' } }, ['agent_id', 'task']) },
];

const REASONING = {
  thought: { type: 'string', description: 'what you know, what is missing, and why this action' },
  reflection: { type: 'string', description: 'after an observation: what it means and whether it is enough' },
  decision: { type: 'string', enum: ['continue', 'done', 'escalate'] },
  reason: { type: 'string', description: 'a short reason for the decision' },
} as const;

const functionsByKey = new Map<string, readonly NativeFunction[]>();
const MAX_CACHED = 64;

/**
 * The functions offered for `contract`, built once per contract key: each allowed tool (its
 * input schema plus a required `confidence`, and the reasoning fields when the agent reasons
 * explicitly), then `final_answer`, `escalate`, `request_info` and `delegate` unless a tool is
 * named so. An argument whose name the tool's own schema already uses is prefixed `redflow_`.
 *
 * @example
 * ```ts
 * const tools = nativeFunctionsFor(request.decision).map((f) => ({ type: 'function', function: f }));
 * ```
 */
export function nativeFunctionsFor(contract: DecisionContract): readonly NativeFunction[] {
  const cached = functionsByKey.get(contract.key);
  if (cached !== undefined) return cached;
  const taken = new Set(contract.tools.map((tool) => tool.name));
  const functions = [
    ...contract.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: withExtras(tool.inputSchema, contract) })),
    ...ACTION_FUNCTIONS.filter((action) => !taken.has(action.name)).map((action) => ({
      ...action,
      parameters: withExtras(action.name === FINAL_ANSWER_FUNCTION ? finalParameters(contract) : action.parameters, contract),
    })),
  ];
  if (functionsByKey.size >= MAX_CACHED) functionsByKey.delete(functionsByKey.keys().next().value as string);
  functionsByKey.set(contract.key, functions);
  return functions;
}

/**
 * The decision JSON text the core validates and logs, from a native answer: no call and plain
 * `content` is a final answer with that message (content that is JSON already is left to the
 * core as it is); one call is that tool's call (or the action its function stands for), its
 * confidence and reasoning taken out of the arguments; several calls are all recorded, as an
 * array the core refuses with `ANSWER_MULTIPLE_TOOL_CALLS`. Arguments that are not one clean
 * JSON object are put in as they came, so the core refuses them with today's codes.
 *
 * @example
 * ```ts
 * nativeAnswerText('', [{ name: 'add', arguments: '{"a":1,"confidence":0.9}' }], contract); // '{"action":"tool","tool":"add","input":{"a":1},"confidence":0.9}'
 * ```
 */
export function nativeAnswerText(content: string, calls: readonly NativeCall[], contract: DecisionContract): string {
  if (calls.length === 0) {
    const trimmed = content.trim();
    return trimmed === '' || trimmed.startsWith('{') || trimmed.startsWith('[') ? content : JSON.stringify({ action: 'final', message: content });
  }
  const texts = calls.map((call) => callText(call, calls.length === 1 ? content : '', contract));
  return texts.length === 1 ? (texts[0] as string) : `[${texts.join(',')}]`;
}

function callText(call: NativeCall, content: string, contract: DecisionContract): string {
  const tool = contract.tools.find((candidate) => candidate.name === call.name);
  const action = tool !== undefined ? 'tool' : ACTION_FUNCTIONS.some((f) => f.name === call.name) ? call.name : 'tool';
  const head = action === 'tool' ? { action, tool: call.name } : { action: action === FINAL_ANSWER_FUNCTION ? 'final' : action };
  const args = call.arguments.trim() === '' ? {} : cleanObject(call.arguments);
  if (args === undefined) return `${JSON.stringify(head).slice(0, -1)},"input":${call.arguments}}`;
  const schema = tool?.inputSchema ?? ACTION_FUNCTIONS.find((f) => f.name === call.name)?.parameters ?? {};
  const extras: Record<string, unknown> = {};
  const input: Record<string, unknown> = { ...args };
  for (const field of ['confidence', ...(contract.explicitReasoning ? Object.keys(REASONING) : [])]) {
    const key = argumentName(schema, field);
    if (key in input) {
      extras[field] = input[key];
      delete input[key];
    }
  }
  if (head.action === 'final') return JSON.stringify({ ...head, ...input, ...extras });
  const message = action === 'tool' && content.trim() !== '' ? { message: content } : {};
  return JSON.stringify({ ...head, input, ...extras, ...message });
}

/** `schema` with `confidence` (required) and, for explicit reasoning, the reasoning fields added. */
function withExtras(schema: Schema, contract: DecisionContract): Schema {
  const properties: Record<string, unknown> = { ...(isObject(schema.properties) ? schema.properties : {}) };
  const required = Array.isArray(schema.required) ? [...(schema.required as string[])] : [];
  const add = (field: string, property: unknown, needed: boolean) => {
    const key = argumentName(schema, field);
    properties[key] = property;
    if (needed) required.push(key);
  };
  add('confidence', { type: 'number', description: 'how sure you are of this step, between 0 and 1' }, true);
  if (contract.explicitReasoning) for (const [field, property] of Object.entries(REASONING)) add(field, property, field === 'thought');
  return { ...schema, type: 'object', properties, required };
}

/** The name of an added argument: the field's own, unless the tool's schema uses it already. */
function argumentName(schema: Schema, field: string): string {
  return isObject(schema.properties) && Object.hasOwn(schema.properties, field) ? `redflow_${field}` : field;
}

function finalParameters(contract: DecisionContract): Schema {
  if (contract.outputSchema === undefined) return (ACTION_FUNCTIONS[0] as NativeFunction).parameters;
  return objectOf({ message: { type: 'string', description: 'the answer itself' }, output: contract.outputSchema }, []);
}

function objectOf(properties: Record<string, unknown>, required: string[]): Schema {
  return { type: 'object', properties, required };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
