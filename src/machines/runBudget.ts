import type { AgentEnvelope, RunOutcome, TokenUsage } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS } from './contextBudget.js';
import { partialAnswer } from './partialAnswer.js';
import type { ChatMessage } from './protocol.js';

/** A model's price, in US dollars per million tokens. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
}

/**
 * What one run may spend on its model, and how to meter it (agent `budget`, docs/budgets.md). The
 * host builds it (src/runtime/runBudgetFor.ts): the counter and the prices are pure functions, so
 * the guards that read it stay free of I/O and a resumed run decides as the first one did.
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

/** What the run has spent: the fold of every `model.answered`'s usage (so it survives a crash and a resume). */
export function spentOf(envelope: AgentEnvelope): { readonly tokens: number; readonly costUsd: number } {
  const usage = envelope.observability.usage;
  return { tokens: usage?.totalTokens ?? 0, costUsd: usage?.costUsd ?? 0 };
}

/** The input tokens of a request's messages, counted as the context budget counts them. */
export function inputTokensOf(messages: readonly ChatMessage[], budget: RunBudget): number {
  return messages.reduce((sum, message) => sum + budget.countTokens(message.content) + MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS);
}

/** Why the run may not make a call now, or undefined when it may: the budget is spent, or `nextInputTokens` alone would overspend it. */
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
