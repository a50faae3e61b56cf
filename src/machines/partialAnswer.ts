import type { AgentEnvelope, ToolCall } from '../contracts/schema-types.js';

/** The longest piece (the model's message, the tool's output) a partial answer keeps, in characters. */
export const PARTIAL_ANSWER_PART_MAX_CHARS = 4_000;

/**
 * What a run stopped by a stop condition has to say: the model's message of its last tool call, if
 * any, then that call's output as text (or its failure), each cut to
 * {@link PARTIAL_ANSWER_PART_MAX_CHARS}. Pure: computed from the envelope alone, so a replay or a
 * resumed run gets the same answer. The model's `thought` is never part of it.
 *
 * @example
 * ```ts
 * partialAnswer(envelope); // 'Found it.\n\nlookup_order: {"orderId":"A-1001","status":"shipped"}'
 * ```
 */
export function partialAnswer(envelope: AgentEnvelope): string {
  const parts: string[] = [];
  const response = envelope.model?.lastResponse as { message?: unknown } | undefined;
  if (typeof response?.message === 'string' && response.message.trim() !== '') parts.push(cut(response.message));
  const call = envelope.tools.history[envelope.tools.history.length - 1];
  if (call) parts.push(callText(call));
  return parts.length > 0 ? parts.join('\n\n') : 'no tool output';
}

function callText(call: ToolCall): string {
  if (call.status === 'failed') {
    const error = call.error ? `${call.error.code}: ${call.error.message}` : 'no details';
    return `${call.tool} failed: ${cut(error)}`;
  }
  if (call.status === 'requested') return `${call.tool}: no result`;
  return `${call.tool}: ${cut(outputText(call.output))}`;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '(no output)';
  return JSON.stringify(output) ?? String(output);
}

/** `text` cut to the limit, never through a surrogate pair, saying how long it was. */
function cut(text: string): string {
  if (text.length <= PARTIAL_ANSWER_PART_MAX_CHARS) return text;
  let end = PARTIAL_ANSWER_PART_MAX_CHARS;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… (cut: ${text.length} characters in all)`;
}
