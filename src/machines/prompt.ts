import type { AgentEnvelope, ToolCall, ToolSpec } from '../contracts/schema-types.js';
import type { ChatMessage } from '../actors/model.js';

/** The prompt every run starts from (one JSON action per iteration); `{{tools}}` becomes the allowed tools. */
export const REACT_PROMPT_TEMPLATE = `You are an execution agent.

You must decide ONE action per iteration.

Available tools:
{{tools}}

Rules:
- Use only the provided tools
- If you have enough information, return a FINAL action
- Always respond in valid JSON
- Do NOT explain your reasoning

Output format:
{
  "action": "tool" | "final",
  "tool": "tool_name_if_any",
  "input": {},
  "confidence": number,
  "message": "required for final: the answer itself; optional for tool"
}`;

/** Longest observation (tool output) put in a prompt; longer ones are cut with a note. */
export const MAX_OBSERVATION_CHARS = 8_000;

/**
 * The system prompt of a run: {@link REACT_PROMPT_TEMPLATE} with each allowed tool's name,
 * description and input schema, then the agent's instructions. The same for every iteration.
 *
 * @example
 * ```ts
 * buildSystemPrompt([{ name: 'add', description: 'Adds', inputSchema: { type: 'object' } }], 'Be brief.');
 * ```
 */
export function buildSystemPrompt(tools: readonly ToolSpec[], instructions?: string): string {
  const list = tools
    .map((tool) => `- ${tool.name}: ${tool.description}\n  input schema: ${JSON.stringify(tool.inputSchema)}`)
    .join('\n');
  const prompt = REACT_PROMPT_TEMPLATE.replace('{{tools}}', list);
  return instructions ? `${prompt}\n\nInstructions:\n${instructions}` : prompt;
}

/**
 * The conversation sent to the model for the next iteration: the system prompt, the run's input
 * (and memory), then each earlier decision and its observation. Built from the envelope alone, so
 * a resumed run sends exactly what the uninterrupted run would have sent.
 */
export function buildMessages(systemPrompt: string, envelope: AgentEnvelope): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  if (envelope.memory && Object.keys(envelope.memory).length > 0) {
    messages.push({ role: 'user', content: `Memory of this conversation:\n${JSON.stringify(envelope.memory)}` });
  }
  messages.push({ role: 'user', content: asText(envelope.input) });
  for (const call of envelope.tools.history) {
    for (const message of callMessages(call)) messages.push(message);
  }
  return messages;
}

// Envelopes are immutable, so a call's messages never change once built: build each once, not
// once per later iteration.
const messagesOfCall = new WeakMap<ToolCall, readonly ChatMessage[]>();

function callMessages(call: ToolCall): readonly ChatMessage[] {
  const cached = messagesOfCall.get(call);
  if (cached) return cached;
  const decision: ChatMessage = {
    role: 'assistant',
    content: JSON.stringify({ action: 'tool', tool: call.tool, input: call.input }),
  };
  let built: readonly ChatMessage[];
  if (call.status === 'requested') {
    built = [decision];
  } else {
    const observation =
      call.status === 'succeeded' ? asText(call.output) : `error ${call.error?.code ?? ''}: ${call.error?.message ?? ''}`;
    built = [decision, { role: 'user', content: `Observation from ${call.tool}:\n${cut(observation)}` }];
  }
  messagesOfCall.set(call, built);
  return built;
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}

function cut(text: string): string {
  if (text.length <= MAX_OBSERVATION_CHARS) return text;
  return `${text.slice(0, MAX_OBSERVATION_CHARS)}\n[… ${text.length - MAX_OBSERVATION_CHARS} more characters cut]`;
}
