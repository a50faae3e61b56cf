import type { AgentEnvelope, RunOutcome, TokenUsage } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { partialAnswer } from './outcomes.js';
import type { ChatMessage } from './protocol.js';

/**
 * How many tokens a model request may take, and how to count them. The counter is a pure function
 * the host loads for the model's family (src/runtime/tokenCounter.ts), so fitting a conversation
 * stays deterministic: a resumed or replayed run leaves out exactly the messages the first one did.
 */
export interface ContextBudget {
  /** Tokens the messages may take: the model's window less what is reserved for its answer. */
  readonly maxTokens: number;
  readonly countTokens: (text: string) => number;
}

/**
 * What each message costs besides its text in a chat request (role and separators), and what the
 * reply's priming costs: OpenAI's documented accounting, used for every family as a safe estimate.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;
export const REPLY_PRIMING_TOKENS = 3;

/** The note that stands where messages were left out, so the model knows the conversation is cut. */
export function omittedNote(count: number): ChatMessage {
  return { role: 'user', content: `[${count} earlier message${count === 1 ? '' : 's'} left out to fit the context window]` };
}

/** The messages that fit, or by how much the ones that must be kept do not. */
export type FittedMessages =
  | { readonly ok: true; readonly messages: readonly ChatMessage[]; readonly dropped: number; readonly tokens: number }
  | { readonly ok: false; readonly tokens: number; readonly maxTokens: number };

/**
 * Fits a conversation into a token budget by leaving out its oldest messages first: never one of
 * `pinned` (the system prompt and the current query), and a model's decision together with the
 * observation that answers it, so no observation is left without its call. When messages are left
 * out, a note takes the place of the first one.
 *
 * @param pinned indices of the messages that are always kept.
 * @example
 * ```ts
 * const fitted = fitMessages(messages, new Set([0, 1]), { maxTokens: 7_192, countTokens });
 * if (!fitted.ok) throw new Error(`the prompt alone needs ${fitted.tokens} tokens`);
 * ```
 */
export function fitMessages(messages: readonly ChatMessage[], pinned: ReadonlySet<number>, budget: ContextBudget): FittedMessages {
  const cost = messages.map((message) => budget.countTokens(message.content) + MESSAGE_OVERHEAD_TOKENS);
  let tokens = cost.reduce((sum, n) => sum + n, REPLY_PRIMING_TOKENS);
  if (tokens <= budget.maxTokens) return { ok: true, messages, dropped: 0, tokens };

  const droppable = groupsOldestFirst(messages, pinned);
  const noteCost = (count: number) => budget.countTokens(omittedNote(count).content) + MESSAGE_OVERHEAD_TOKENS;
  const left = new Set<number>();
  for (const group of droppable) {
    for (const index of group) {
      left.add(index);
      tokens -= cost[index] as number;
    }
    if (tokens + noteCost(left.size) <= budget.maxTokens) break;
  }
  if (left.size > 0) tokens += noteCost(left.size);
  if (tokens > budget.maxTokens) return { ok: false, tokens, maxTokens: budget.maxTokens };
  return { ok: true, messages: omitOldest(messages, pinned, left.size), dropped: left.size, tokens };
}

/**
 * The messages less the `count` oldest that {@link fitMessages} leaves out first, with its note in
 * their place: how a reader of the log rebuilds what a request showed from its `omittedMessages`.
 */
export function omitOldest(messages: readonly ChatMessage[], pinned: ReadonlySet<number>, count: number): ChatMessage[] {
  const left = new Set<number>();
  for (const group of groupsOldestFirst(messages, pinned)) {
    if (left.size >= count) break;
    for (const index of group) left.add(index);
  }
  const kept: ChatMessage[] = [];
  let noted = false;
  messages.forEach((message, index) => {
    if (!left.has(index)) kept.push(message);
    else if (!noted) {
      kept.push(omittedNote(left.size));
      noted = true;
    }
  });
  return kept;
}

/** Unpinned messages in groups that go together, oldest first: an assistant turn takes the message answering it. */
function groupsOldestFirst(messages: readonly ChatMessage[], pinned: ReadonlySet<number>): number[][] {
  const groups: number[][] = [];
  for (let index = 0; index < messages.length; index += 1) {
    if (pinned.has(index)) continue;
    const group = [index];
    const next = index + 1;
    if (messages[index]?.role === 'assistant' && messages[next]?.role === 'user' && !pinned.has(next)) {
      group.push(next);
      index = next;
    }
    groups.push(group);
  }
  return groups;
}

// What a run may spend on its model (agent `budget`): counted as the context budget counts, so
// both live here.

/**
 * A model's price, in US dollars per million tokens.
 *
 * @example
 * ```ts
 * const gpt4oMini: ModelPrice = { input: 0.15, output: 0.6 };
 * ```
 */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
}

/**
 * What one run may spend on its model, and how to meter it (agent `budget`, docs/budgets.md). The
 * host builds it (src/runtime/runBudgetFor.ts): the counter and the prices are pure functions, so
 * the guards that read it stay free of I/O and a resumed run decides as the first one did.
 *
 * @example
 * ```ts
 * const budget: RunBudget = { maxTokens: 20_000, model: 'gpt-4o', priceOf: () => undefined, countTokens: (text) => text.length };
 * ```
 */
export interface RunBudget {
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
  /** The node's model: whose price a call has unless a fallback answered it. */
  readonly model: string;
  /** The price of a model by its name, or undefined when the table has none. */
  readonly priceOf: (model: string) => ModelPrice | undefined;
  /** The tokenizer's count of a text: the estimate where the provider reports no usage. */
  readonly countTokens: (text: string) => number;
}

/**
 * What the run has spent: the fold of every `model.answered`'s usage (so it survives a crash and a resume).
 *
 * @example
 * ```ts
 * spentOf(fold(events)); // { tokens: 1452, costUsd: 0 }
 * ```
 */
export function spentOf(envelope: AgentEnvelope): { readonly tokens: number; readonly costUsd: number } {
  const usage = envelope.observability.usage;
  return { tokens: usage?.totalTokens ?? 0, costUsd: usage?.costUsd ?? 0 };
}

/**
 * The input tokens of a request's messages, counted as the context budget counts them.
 *
 * @example
 * ```ts
 * inputTokensOf([{ role: 'user', content: 'hi' }], budget); // 1 + 4 + 3
 * ```
 */
export function inputTokensOf(messages: readonly ChatMessage[], budget: RunBudget): number {
  return messages.reduce((sum, message) => sum + budget.countTokens(message.content) + MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS);
}

/**
 * Why the run may not make a call now, or undefined when it may: the budget is spent, or
 * `nextInputTokens` alone would overspend it.
 *
 * @example
 * ```ts
 * budgetStop(budget, envelope, 474); // "the next model call's input alone is about 474 tokens, and 48 … are left"
 * ```
 */
export function budgetStop(budget: RunBudget | undefined, envelope: AgentEnvelope, nextInputTokens?: number): string | undefined {
  if (budget === undefined) return undefined;
  const { tokens, costUsd } = spentOf(envelope);
  const { maxTokens, maxCostUsd } = budget;
  if (maxTokens !== undefined && tokens >= maxTokens) return `the run spent ${tokens} tokens of its budget.maxTokens ${maxTokens}`;
  if (maxCostUsd !== undefined && costUsd >= maxCostUsd) return `the run spent $${dollars(costUsd)} of its budget.maxCost $${maxCostUsd}`;
  if (nextInputTokens === undefined) return undefined;
  if (maxTokens !== undefined && tokens + nextInputTokens > maxTokens) {
    return `the next model call's input alone is about ${nextInputTokens} tokens, and ${maxTokens - tokens} of budget.maxTokens ${maxTokens} are left`;
  }
  const price = budget.priceOf(budget.model);
  if (maxCostUsd !== undefined && price !== undefined) {
    const inputCost = (nextInputTokens * price.input) / 1e6;
    if (costUsd + inputCost > maxCostUsd) {
      return `the next model call's input alone would cost about $${dollars(inputCost)}, and $${dollars(maxCostUsd - costUsd)} of budget.maxCost $${maxCostUsd} are left`;
    }
  }
  return undefined;
}

/**
 * The usage `model.answered` records for a call of a run with a budget: the provider's, or the
 * tokenizer's estimate of the request (`inputTokens`) and the answer (`estimated: true`), with its
 * cost when the answering model has a price.
 *
 * @example
 * ```ts
 * meteredUsage(budget, undefined, 120, '{"action":"final","message":"12.5"}', 'gpt-4o-mini');
 * // { promptTokens: 120, completionTokens: 12, totalTokens: 132, estimated: true, costUsd: 0.0000252 }
 * ```
 */
export function meteredUsage(budget: RunBudget, reported: TokenUsage | undefined, inputTokens: number, text: string, model: string): TokenUsage {
  const usage: TokenUsage =
    reported === undefined
      ? { promptTokens: inputTokens, completionTokens: budget.countTokens(text), totalTokens: 0, estimated: true }
      : { promptTokens: reported.promptTokens, completionTokens: reported.completionTokens, totalTokens: reported.totalTokens };
  if (reported === undefined) usage.totalTokens = usage.promptTokens + usage.completionTokens;
  const price = budget.priceOf(model);
  if (price !== undefined) usage.costUsd = (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1e6;
  return usage;
}

/**
 * The ending of a run stopped by its budget: `done_partial` with what it has when a tool ran (as a
 * stop condition ends a run), else `blocked`; both keep the reason `budget_exhausted` and the error.
 *
 * @example
 * ```ts
 * budgetExhausted('the run spent 1000 tokens of its budget.maxTokens 1000', envelope).reason; // 'budget_exhausted'
 * ```
 */
export function budgetExhausted(why: string, envelope: AgentEnvelope): RunOutcome {
  const error = errorInfo(ErrorCode.BUDGET_EXHAUSTED, `stopped before the run's budget was overspent: ${why}`, {
    hint: "raise the agent's budget (maxTokens, maxCost), or shorten its input; the log keeps what was spent",
  });
  if (envelope.tools.history.length === 0) return { status: 'blocked', reason: 'budget_exhausted', error };
  return { status: 'done_partial', reason: 'budget_exhausted', answer: partialAnswer(envelope), error };
}

/** Dollars as the messages show them: up to 6 decimals, no trailing zeros. */
function dollars(amount: number): string {
  return String(Math.round(amount * 1e6) / 1e6);
}
