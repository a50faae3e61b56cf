import type { AgentCoreReactConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ModelPrice, RunBudget } from '../machines/contextBudget.js';
import { tokenCounterFor } from './tokenCounter.js';

/**
 * List prices in US dollars per million tokens (input, output), from the providers' public price
 * pages as of 2025-06 (OpenAI, Anthropic). Prices change: set your own in the agent's
 * `budget.prices` (they take precedence); a name matches every model it is a prefix of
 * (`claude-sonnet-4` covers `claude-sonnet-4-20250514`), the longest matching name winning.
 *
 * @example
 * ```ts
 * const prices = { ...DEFAULT_MODEL_PRICES, 'llama3.1': { input: 0, output: 0 } };
 * ```
 */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  o3: { input: 2, output: 8 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
};

/**
 * The price of `model` in `table`: its own entry, or the longest name that is a prefix of it (a
 * provider's `openai/` or `anthropic/` in front is ignored).
 *
 * @example
 * ```ts
 * priceIn(DEFAULT_MODEL_PRICES, 'gpt-4o-mini-2024-07-18'); // { input: 0.15, output: 0.6 }
 * ```
 */
export function priceIn(table: Readonly<Record<string, ModelPrice>>, model: string): ModelPrice | undefined {
  const name = model.replace(/^(openai|anthropic)\//, '');
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (name.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : table[best];
}

function invalid(message: string, hint: string): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.BUDGET_CONFIG_INVALID, message, { hint }));
}

function isPositive(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/** Checks what the schema checks too, for configs that reach a run without it (agent definitions in code). */
function checkBudget(budget: NonNullable<AgentCoreReactConfig['budget']>): void {
  if (budget.maxTokens !== undefined && !(isPositive(budget.maxTokens) && Number.isInteger(budget.maxTokens))) {
    throw invalid(`budget.maxTokens is ${JSON.stringify(budget.maxTokens)}: it must be a whole number of tokens above 0`, 'set budget.maxTokens to e.g. 20000, or leave it out');
  }
  if (budget.maxCost !== undefined && !isPositive(budget.maxCost)) {
    throw invalid(`budget.maxCost is ${JSON.stringify(budget.maxCost)}: it must be a number of US dollars above 0`, 'set budget.maxCost to e.g. 0.5, or leave it out');
  }
  for (const [model, price] of Object.entries(budget.prices ?? {})) {
    const ok = typeof price === 'object' && price !== null && [price.input, price.output].every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0);
    if (!ok) throw invalid(`budget.prices[${JSON.stringify(model)}] is not a price`, 'give each model { "input": <USD per million tokens>, "output": <USD per million tokens> }');
  }
}

/**
 * The budget of a run of `agent` on `model` (undefined when the agent sets none): its limits, the
 * price table (the agent's `budget.prices` over {@link DEFAULT_MODEL_PRICES}) and the model's
 * tokenizer for estimates, loaded here once per encoding.
 *
 * @throws RedflowError `BUDGET_CONFIG_INVALID` when a limit or a price is not one, or `maxCost` is
 * set for a model with no price.
 * @example
 * ```ts
 * const budget = await runBudgetFor(agent, 'gpt-4o-mini'); // hand it to the run as `budget`
 * ```
 */
export async function runBudgetFor(agent: Pick<AgentCoreReactConfig, 'budget'>, model: string): Promise<RunBudget | undefined> {
  const { budget } = agent;
  if (budget === undefined) return undefined;
  if (typeof budget !== 'object' || budget === null) throw invalid('budget is not an object', 'set budget to { "maxTokens": 20000, "maxCost": 0.5 } or leave it out');
  checkBudget(budget);
  const table: Record<string, ModelPrice> = { ...DEFAULT_MODEL_PRICES, ...budget.prices };
  const priceOf = (name: string) => priceIn(table, name);
  if (budget.maxCost !== undefined && priceOf(model) === undefined) {
    throw invalid(`budget.maxCost is set but model ${JSON.stringify(model)} has no price`, `add it to budget.prices: { ${JSON.stringify(model)}: { "input": 0.5, "output": 1.5 } } (US dollars per million tokens)`);
  }
  const counter = await tokenCounterFor(model);
  const counted = new Map<string, number>();
  const countTokens = (text: string): number => {
    let n = counted.get(text);
    if (n === undefined) {
      n = counter.countTokens(text);
      // Bounded: each request counts again the messages the last one had, but a server lives long.
      if (counted.size > 10_000) counted.clear();
      counted.set(text, n);
    }
    return n;
  };
  return {
    model,
    priceOf,
    countTokens,
    ...(budget.maxTokens !== undefined && { maxTokens: budget.maxTokens }),
    ...(budget.maxCost !== undefined && { maxCostUsd: budget.maxCost }),
  };
}
