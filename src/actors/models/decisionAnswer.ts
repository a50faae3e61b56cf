import { defaultAnswerLimits } from '../../validation/validateModelAnswer.js';
import { scanJsonText } from '../../validation/scanJsonText.js';
import type { DecisionContract } from '../model.js';
import { DECISION_ROOT, decisionSchemaFor } from './decisionSchema.js';
import { withoutStrictNulls } from './strictSchema.js';

type Fields = Record<string, unknown>;

/** Fields a strict answer sets to null when it has nothing to say. */
const NULLABLE_FIELDS = ['message', 'output', 'reflection', 'decision', 'reason'] as const;

/**
 * The parsed object of `text`, or `undefined` when it is not one JSON object the core would
 * accept the shape of: too deep, with duplicate or reserved keys, or not JSON. Such text is left
 * as it came, for the core to refuse with the code it refuses it with today.
 *
 * @example
 * ```ts
 * cleanObject('{"a":1}'); // { a: 1 }
 * cleanObject('{"a":1,"a":2}'); // undefined: the core reports ANSWER_DUPLICATE_KEY
 * ```
 */
export function cleanObject(text: string): Fields | undefined {
  if (!text.isWellFormed() || text.length > defaultAnswerLimits.maxChars) return undefined;
  if (scanJsonText(text, defaultAnswerLimits.maxDepth) !== undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Fields) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The decision JSON text the core validates and logs, from an answer written to the schema of
 * `decisionSchemaFor(contract)`: the `decision` taken out of its wrapper, the nulls strict mode
 * made the model write for absent fields removed, an input or output asked for as JSON text
 * parsed back. Any text that is not such an answer is returned as it came.
 *
 * @example
 * ```ts
 * structuredAnswerText('{"decision":{"action":"final","message":"Hi","confidence":1}}', contract); // '{"action":"final","message":"Hi","confidence":1}'
 * ```
 */
export function structuredAnswerText(text: string, contract: DecisionContract): string {
  const wrapper = cleanObject(text);
  const decision = wrapper?.[DECISION_ROOT];
  if (wrapper === undefined || Object.keys(wrapper).length !== 1 || typeof decision !== 'object' || decision === null || Array.isArray(decision)) return text;
  return JSON.stringify(normaliseDecision(decision as Fields, contract));
}

/** One decision as the core expects it (see {@link structuredAnswerText}). */
export function normaliseDecision(decision: Fields, contract: DecisionContract): Fields {
  const out: Fields = { ...decision };
  for (const field of NULLABLE_FIELDS) if (out[field] === null) delete out[field];
  const { inputAsText, outputAsText } = decisionSchemaFor(contract);
  if (out.action === 'tool' && typeof out.tool === 'string') {
    const tool = contract.tools.find((candidate) => candidate.name === out.tool);
    if (tool !== undefined) out.input = inputAsText.has(tool.name) ? fromJsonText(out.input) : withoutStrictNulls(out.input, tool.inputSchema);
  } else if ((out.action === 'escalate' || out.action === 'request_info') && isFields(out.input) && out.input.context === null) {
    const { context: _none, ...input } = out.input;
    out.input = input;
  } else if (out.action === 'final' && 'output' in out && contract.outputSchema !== undefined) {
    out.output = outputAsText ? fromJsonText(out.output) : withoutStrictNulls(out.output, contract.outputSchema);
  }
  return out;
}

/** A value asked for as JSON text, parsed back; the text itself when it is not clean JSON (the core then says what is wrong). */
function fromJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (scanJsonText(value, defaultAnswerLimits.maxDepth) !== undefined) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
