import type { AgentCoreReactConfig, AgentEnvelope, AnswerRejectedData, Exchange, ToolCall, ToolSpec } from '../contracts/schema-types.js';
import type { ChatMessage } from './protocol.js';
import { budgetStop, fitMessages, inputTokensOf, omitOldest, type ContextBudget } from './contextBudget.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { evolve } from '../events/evolve.js';
import type { ReactContext } from './reactTypes.js';
import { verificationFailed, verificationObservation } from './verification.js';

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
  "action": "tool" | "final" | "escalate" | "request_info" | "delegate",
  "tool": "tool_name_if_any",
  "input": {},
  "confidence": number,
  "message": "required for final: the answer itself; optional for tool"
}

Other actions, each with its "input":
- escalate {"reason", "question", "context"?}: a person must decide (an ambiguity, a business decision, a risk); you get their answer
- request_info {"question"}: information only the user has is missing; you get their answer
- delegate {"agent_id", "task"}: another agent must do the task`;

/** Added to the prompt of an agent whose reasoning is "explicit". */
const EXPLICIT_REASONING = `Reasoning (required in every answer):
- "thought": what you know, what is missing, and why this action
- after an observation, also "reflection": what the observation means and whether it is enough, and "decision": "continue" (tool, request_info, delegate), "done" (final) or "escalate" (escalate), with a short "reason"`;

/** Longest observation (tool output) put in a prompt; longer ones are cut with a note. */
export const MAX_OBSERVATION_CHARS = 8_000;

/**
 * The system prompt of a run: {@link REACT_PROMPT_TEMPLATE} with each allowed tool's name,
 * description and input schema (or that there is none), then the agent's instructions. The same
 * for every iteration.
 *
 * @example
 * ```ts
 * buildSystemPrompt([{ name: 'add', description: 'Adds', inputSchema: { type: 'object' } }], 'Be brief.');
 * ```
 */
export function buildSystemPrompt(
  tools: readonly ToolSpec[],
  instructions?: string,
  agent?: Pick<AgentCoreReactConfig, 'reasoning' | 'outputSchema'>,
): string {
  // An agent without tools (an agent definition may have none) is told so, not shown an empty list.
  const list =
    tools.length === 0
      ? '(none: answer with a final action, or ask a person)'
      : tools.map((tool) => `- ${tool.name}: ${tool.description}\n  input schema: ${JSON.stringify(tool.inputSchema)}`).join('\n');
  let prompt = REACT_PROMPT_TEMPLATE.replace('{{tools}}', list);
  if (agent?.reasoning === 'explicit') {
    prompt = `${prompt.replace('- Do NOT explain your reasoning', '- Explain your reasoning only in "thought" and "reflection"')}\n\n${EXPLICIT_REASONING}`;
  }
  if (agent?.outputSchema !== undefined) {
    prompt = `${prompt}\n\nFinal output: a final answer gives "output", a JSON value matching this JSON Schema:\n${JSON.stringify(agent.outputSchema)}`;
  }
  return instructions ? `${prompt}\n\nInstructions:\n${instructions}` : prompt;
}

/** The prompt last built for a list of tool specs, and the agent settings it was built with. */
interface CachedPrompt {
  readonly instructions: string | undefined;
  readonly reasoning: AgentCoreReactConfig['reasoning'];
  readonly outputSchema: AgentCoreReactConfig['outputSchema'];
  readonly prompt: string;
}

const promptByTools = new WeakMap<readonly ToolSpec[], CachedPrompt>();

/**
 * The system prompt of a run of `agent`: {@link buildSystemPrompt} with its instructions, reasoning
 * and outputSchema, built once for runs that share their tool list and those settings (the runs of
 * one host share one string). A tool list is read when it is first seen: give another array rather
 * than changing one in place.
 */
export function systemPromptFor(tools: readonly ToolSpec[], agent: Pick<AgentCoreReactConfig, 'instructions' | 'reasoning' | 'outputSchema'>): string {
  const cached = promptByTools.get(tools);
  if (cached !== undefined && cached.instructions === agent.instructions && cached.reasoning === agent.reasoning && cached.outputSchema === agent.outputSchema) {
    return cached.prompt;
  }
  const prompt = buildSystemPrompt(tools, agent.instructions, agent);
  promptByTools.set(tools, { instructions: agent.instructions, reasoning: agent.reasoning, outputSchema: agent.outputSchema, prompt });
  return prompt;
}

/**
 * The conversation sent to the model for the next iteration: the system prompt, the conversation's
 * memory and earlier turns, the context given with the input, the run's input, then each earlier
 * decision and its observation (a tool's result, a person's answer, an output's schema errors). Built from the envelope alone, so a resumed run sends exactly what
 * the uninterrupted run would have sent.
 */
export function buildMessages(systemPrompt: string, envelope: AgentEnvelope): ChatMessage[] {
  return conversation(systemPrompt, envelope).messages;
}

/** The messages with the index of the run's input: it and the system prompt are never left out. */
function conversation(systemPrompt: string, envelope: AgentEnvelope): { messages: ChatMessage[]; inputIndex: number } {
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  if (envelope.memory && Object.keys(envelope.memory).length > 0) {
    messages.push({ role: 'user', content: `Memory of this conversation:\n${JSON.stringify(envelope.memory)}` });
  }
  if (envelope.history !== undefined) for (const message of envelope.history) messages.push(message);
  if (envelope.context !== undefined) messages.push({ role: 'user', content: envelope.context });
  const inputIndex = messages.length;
  messages.push({ role: 'user', content: asText(envelope.input) });
  const { exchanges } = envelope;
  if (exchanges === undefined) {
    for (const call of envelope.tools.history) for (const message of callMessages(call)) messages.push(message);
    return { messages, inputIndex };
  }
  // Each iteration has one decision, a call or an exchange: merged in iteration order.
  const calls = envelope.tools.history;
  let c = 0;
  let x = 0;
  while (c < calls.length || x < exchanges.length) {
    const call = calls[c];
    const exchange = exchanges[x];
    const built = exchange === undefined || (call !== undefined && call.iteration <= exchange.iteration) ? callMessages(calls[c++] as ToolCall) : exchangeMessages(exchanges[x++] as Exchange);
    for (const message of built) messages.push(message);
  }
  return { messages, inputIndex };
}

/**
 * What the model is sent: {@link buildMessages}, fitted to the context window when the run has a
 * budget by leaving out the oldest messages (never the system prompt or the input), and how many
 * were left out (`omittedMessages` of `model.requested`). When even the two kept messages do not
 * fit, they are sent with everything else left out: the host refuses such a run before it starts.
 */
export function modelMessages(systemPrompt: string, envelope: AgentEnvelope, budget: ContextBudget | undefined): { messages: ChatMessage[]; omitted: number } {
  const { messages, inputIndex } = conversation(systemPrompt, envelope);
  if (budget === undefined) return { messages, omitted: 0 };
  const pinned = new Set([0, inputIndex]);
  const fitted = fitMessages(messages, pinned, budget);
  if (fitted.ok) return { messages: [...fitted.messages], omitted: fitted.dropped };
  const all = messages.length - pinned.size;
  return { messages: omitOldest(messages, pinned, all), omitted: all };
}

/**
 * The messages a model request showed, from the log: {@link buildMessages} less the `omitted`
 * oldest ones its `model.requested` records, the same ones the run left out.
 */
export function messagesShown(systemPrompt: string, envelope: AgentEnvelope, omitted: number | undefined): ChatMessage[] {
  const { messages, inputIndex } = conversation(systemPrompt, envelope);
  if (omitted === undefined || omitted === 0) return messages;
  return omitOldest(messages, new Set([0, inputIndex]), omitted);
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

const messagesOfExchange = new WeakMap<Exchange, readonly ChatMessage[]>();

/** A question to a person and the answer, or an output sent back with what is wrong with it. */
function exchangeMessages(exchange: Exchange): readonly ChatMessage[] {
  const cached = messagesOfExchange.get(exchange);
  if (cached) return cached;
  let built: readonly ChatMessage[];
  if (exchange.kind === 'output_repair') {
    built = [
      { role: 'assistant', content: JSON.stringify({ action: 'final', output: exchange.output }) },
      {
        role: 'user',
        content: `Your final output does not match the output schema:\n${(exchange.errors ?? []).map((error) => `- ${error}`).join('\n')}\nAnswer again with a final answer whose "output" matches it.`,
      },
    ];
  } else if (exchange.kind === 'answer_repair') {
    built = answerRepairMessages(exchange);
  } else if (exchange.kind === 'verification') {
    // Pending (the verifier is being asked) or passed (the run ends), it is no turn of the model's.
    built = verificationFailed(exchange) ? verificationObservation(exchange) : [];
  } else {
    const input: Record<string, unknown> = { question: exchange.question };
    if (exchange.reason !== undefined) input.reason = exchange.reason;
    if (exchange.context !== undefined) input.context = exchange.context;
    const decision: ChatMessage = { role: 'assistant', content: JSON.stringify({ action: exchange.kind, input }) };
    built = exchange.answer === undefined ? [decision] : [decision, { role: 'user', content: `Answer from a person:\n${cut(exchange.answer)}` }];
  }
  messagesOfExchange.set(exchange, built);
  return built;
}

/** What a valid answer looks like, for a model that broke the format: the two it needs most. */
const VALID_ANSWER_EXAMPLE = '{"action":"final","message":"the answer"} or {"action":"tool","tool":"<tool name>","input":{},"confidence":0.8}';

/**
 * An answer that broke the answer format, sent back (onInvalidAnswer): the answer as the model gave
 * it (left out when the log withheld it), then what was wrong with it and what a valid one looks like.
 */
function answerRepairMessages(exchange: Exchange): readonly ChatMessage[] {
  const { error } = exchange;
  const why = `Your answer was rejected: ${error?.code ?? 'INVALID_ANSWER'}: ${error?.message ?? ''}${error?.hint === undefined ? '' : ` (${error.hint})`}`;
  const again = `${why}\nAnswer again with exactly one JSON object in the output format, and nothing else, e.g. ${VALID_ANSWER_EXAMPLE}.`;
  const repair: ChatMessage = { role: 'user', content: again };
  return exchange.answer === undefined || exchange.answer === '' ? [repair] : [{ role: 'assistant', content: exchange.answer }, repair];
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}

function cut(text: string): string {
  if (text.length <= MAX_OBSERVATION_CHARS) return text;
  return `${text.slice(0, MAX_OBSERVATION_CHARS)}\n[… ${text.length - MAX_OBSERVATION_CHARS} more characters cut]`;
}

// The REACT statechart's budget checks (agent `budget`, docs/budgets.md), read off the context
// alone: what the run spent is the fold of its log's usage, and the next request's input is
// counted with the budget's tokenizer from the messages it would send, built here.

/**
 * The `run.started` fact of the run the context describes.
 *
 * @example
 * ```ts
 * const envelope = evolve(context.envelope, runStartedFact(context));
 * ```
 */
export function runStartedFact(context: ReactContext): RecordedFact {
  const { run, agent, tools, timeoutMs } = context.settings;
  const data: Extract<RecordedFact, { type: 'run.started' }>['data'] = {
    input: run.input,
    startedAt: run.startedAt,
    agent,
    tools: [...tools],
    ...(run.memory !== undefined && { memory: run.memory }),
    ...(run.conversationId !== undefined && { conversationId: run.conversationId }),
    ...(run.flow !== undefined && { flow: run.flow }),
    // Kept for a run resumed after a wait: each stretch of its work gets the same bound.
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(run.history !== undefined && { history: [...run.history] }),
    ...(run.context !== undefined && { context: run.context }),
    ...(run.parent !== undefined && { parent: run.parent }),
  };
  return { type: AgentEventType.RunStarted, iteration: 0, data };
}

/**
 * The input tokens of the model request the context would send now (its messages as
 * `sendModelRequest` builds them); 0 without a budget.
 *
 * @example
 * ```ts
 * nextRequestTokens(context); // 474
 * ```
 */
export function nextRequestTokens(context: ReactContext, envelope = context.envelope): number {
  const { budget, systemPrompt, contextBudget } = context.settings;
  if (budget === undefined) return 0;
  return inputTokensOf(modelMessages(systemPrompt, envelope, contextBudget).messages, budget);
}

/**
 * Why the next model call may not be made (spent, or its input alone overspends), or undefined.
 *
 * @example
 * ```ts
 * if (nextCallBudgetStop(context) !== undefined) console.log('the run ends budget_exhausted');
 * ```
 */
export function nextCallBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  return budget === undefined ? undefined : budgetStop(budget, context.envelope, nextRequestTokens(context));
}

/**
 * Why a new run's first call may not be made: counted on the envelope as it will be once
 * `run.started` is recorded.
 *
 * @example
 * ```ts
 * firstCallBudgetStop(context); // undefined unless the prompt and input alone pass the budget
 * ```
 */
export function firstCallBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  if (budget === undefined || context.settings.resume !== undefined) return undefined;
  const started = evolve(context.envelope, runStartedFact(context));
  return budgetStop(budget, started, nextRequestTokens(context, started));
}

/**
 * Why the answer just received may not be acted on: the budget is spent and it is not a valid
 * final answer (the call is paid for: a final answer still ends the run `done`).
 *
 * @example
 * ```ts
 * answerBudgetStop(context); // "the run spent 1100 tokens of its budget.maxTokens 1000" for a tool call
 * ```
 */
export function answerBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  const { validation } = context;
  if (budget === undefined || (validation?.ok === true && validation.answer.action === 'final')) return undefined;
  return budgetStop(budget, context.envelope);
}

/** Most of a rejected answer `answer.rejected` keeps (and the model is shown again): the log holds the whole in `model.answered`. */
const REJECTED_TEXT_CHARS = 2_000;

/**
 * The fact that sends the answer being judged back for repair: `answer.rejected` for an invalid
 * one, else `output.rejected` (its output failed the schema).
 *
 * @example
 * ```ts
 * repairFact(context); // { type: 'answer.rejected', iteration: 2, data: { text, error } }
 * ```
 */
export function repairFact(context: ReactContext): RecordedFact {
  const { validation, envelope } = context;
  if (validation?.ok !== false) {
    const output = validation?.output;
    return { type: AgentEventType.OutputRejected, iteration: envelope.state.iteration, data: { output: output?.value ?? null, errors: [...(output?.errors ?? [])] } };
  }
  // The answer as `model.answered` logged it (its thought already out), so the log says nothing twice that it hid once.
  const logged = envelope.model?.lastResponse;
  const text = typeof logged === 'string' ? logged : '';
  const length = context.answerLength ?? text.length;
  const data: AnswerRejectedData = { text: text.slice(0, REJECTED_TEXT_CHARS), error: validation.error };
  if (length > REJECTED_TEXT_CHARS) data.originalLength = length;
  return { type: AgentEventType.AnswerRejected, iteration: envelope.state.iteration, data };
}

/**
 * Why a repair's re-ask may not be made (spent, or its input alone overspends), or undefined: a
 * model call like the next iteration's, its input counted with the rejection recorded.
 *
 * @example
 * ```ts
 * repairBudgetStop(context); // "the next model call's input alone is about 530 tokens, and 212 … are left"
 * ```
 */
export function repairBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  if (budget === undefined) return undefined;
  const rejected = evolve(context.envelope, repairFact(context));
  return budgetStop(budget, rejected, nextRequestTokens(context, rejected));
}
