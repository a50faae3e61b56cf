/**
 * Token counting for a model family, with gpt-tokenizer's byte-pair encodings. Loaded only when a
 * budget is set (the tables are several megabytes), and once per encoding.
 */

/** The encoding a model's tokens are counted with. */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

/** A loaded counter: the number of tokens a text encodes to. */
export interface TokenCounter {
  readonly encoding: TokenEncoding;
  /** True when the count is the model's own tokenizer's, false when it is an estimate (other families). */
  readonly exact: boolean;
  readonly countTokens: (text: string) => number;
}

/**
 * Which encoding counts a model's tokens: o200k for OpenAI's current families (gpt-4o, gpt-4.1,
 * gpt-5, o-series, gpt-oss), cl100k for gpt-4 and gpt-3.5. Other families (Claude, Llama, Mistral…)
 * publish no tokenizer that runs locally for their current models; cl100k is used as an estimate,
 * which is why a budget should keep some room (see {@link estimateMargin}).
 *
 * @example
 * ```ts
 * encodingFor('gpt-4o-mini'); // { encoding: 'o200k_base', exact: true }
 * ```
 */
export function encodingFor(model: string): { encoding: TokenEncoding; exact: boolean } {
  const name = model.toLowerCase().replace(/^openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[1-9]|chatgpt-4o|gpt-oss)/.test(name)) return { encoding: 'o200k_base', exact: true };
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return { encoding: 'cl100k_base', exact: true };
  return { encoding: 'cl100k_base', exact: false };
}

/** The share of a budget kept free when counts are estimates: other tokenizers can count ~15% more. */
export const estimateMargin = 0.15;

const loaded = new Map<TokenEncoding, Promise<(text: string) => number>>();

// Special-token strings such as <|endoftext|> in a user's text are counted as text: they are text
// to the provider too, and refusing them would let a user's message break the budget check.
const asText = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

async function loadEncoding(encoding: TokenEncoding): Promise<(text: string) => number> {
  const module =
    encoding === 'o200k_base' ? await import('gpt-tokenizer/encoding/o200k_base') : await import('gpt-tokenizer/encoding/cl100k_base');
  return (text) => module.countTokens(text, asText);
}

/**
 * The token counter for a model, loaded on first use.
 *
 * @example
 * ```ts
 * const counter = await tokenCounterFor('gpt-4o');
 * counter.countTokens('How is authentication implemented?'); // 6
 * ```
 */
export async function tokenCounterFor(model: string): Promise<TokenCounter> {
  const { encoding, exact } = encodingFor(model);
  let load = loaded.get(encoding);
  if (load === undefined) {
    load = loadEncoding(encoding);
    loaded.set(encoding, load);
  }
  return { encoding, exact, countTokens: await load };
}

/**
 * The tokens a request's messages may take: the window less the answer's reserve, less the margin
 * when the count is an estimate.
 *
 * @example
 * ```ts
 * messageTokenBudget(8_192, 1_000, true); // 7192
 * ```
 */
export function messageTokenBudget(tokenLimit: number, reservedOutputTokens: number, exact: boolean): number {
  const room = tokenLimit - reservedOutputTokens;
  return exact ? room : Math.floor(room * (1 - estimateMargin));
}
