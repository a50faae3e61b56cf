import type { ModelLlmConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, type ContextBudget } from '../machines/contextBudget.js';
import { messageTokenBudget, tokenCounterFor } from './tokenCounter.js';

/** Tokens kept for the answer when a model node sets `contextTokens` without `maxTokens`. */
export const DEFAULT_ANSWER_RESERVE = 1000;

/**
 * The context budget of a `model.llm` node with `contextTokens`: its window less the answer's
 * reserve, counted with the model's tokenizer (loaded here, once per encoding). Counts are kept per
 * text, since each request counts again the messages the last one had.
 *
 * @example
 * ```ts
 * const budget = await contextBudgetFor({ model: 'gpt-4o', contextTokens: 8192 }); // { maxTokens: 7192, countTokens }
 * ```
 */
export async function contextBudgetFor(config: Pick<ModelLlmConfig, 'model' | 'contextTokens' | 'maxTokens'>): Promise<ContextBudget | undefined> {
  if (config.contextTokens === undefined) return undefined;
  return budgetOf(config.model ?? '', config.contextTokens, config.maxTokens ?? Math.min(DEFAULT_ANSWER_RESERVE, Math.floor(config.contextTokens / 4)));
}

/**
 * A context budget for `model`: `tokenLimit` less `reserved` for the answer (less a margin when the
 * count is an estimate), with counts kept per text.
 */
export async function budgetOf(model: string, tokenLimit: number, reserved: number): Promise<ContextBudget> {
  const counter = await tokenCounterFor(model);
  const counted = new Map<string, number>();
  const countTokens = (text: string) => {
    let n = counted.get(text);
    if (n === undefined) {
      n = counter.countTokens(text);
      // Bounded: a long-lived host (a server) keeps no more than this many texts' counts.
      if (counted.size > 10_000) counted.clear();
      counted.set(text, n);
    }
    return n;
  };
  return { maxTokens: messageTokenBudget(tokenLimit, reserved, counter.exact), countTokens };
}

/**
 * Refuses a run whose system prompt and input alone do not fit its budget: they are never left
 * out, so every request would overflow the model's window.
 *
 * @throws RedflowError `CONTEXT_BUDGET_EXCEEDED` before anything is recorded.
 */
export function checkFitsBudget(texts: readonly string[], budget: ContextBudget): void {
  const tokens = texts.reduce((sum, text) => sum + budget.countTokens(text) + MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS);
  if (tokens <= budget.maxTokens) return;
  throw new RedflowError(
    errorInfo(ErrorCode.CONTEXT_BUDGET_EXCEEDED, `the system prompt and the input need ${tokens} tokens; the model's window leaves ${budget.maxTokens} for them`, {
      hint: 'shorten the input or the agent\'s instructions, or raise the window (contextTokens, tokenLimit) if the model has more',
    }),
  );
}
