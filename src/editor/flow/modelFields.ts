/**
 * Which of `model.llm`'s config fields a provider reads, so its form shows only those: a scripted
 * model has its answers and nothing of a server; a server's model has no scripted answers, and
 * Anthropic's Messages API has no JSON mode.
 */

/** What a model node is when it names no provider (the schema's default). */
const DEFAULT_PROVIDER = 'openai';

/** Every field but `provider` that only a scripted model reads. */
const SCRIPTED_FIELDS = ['answers', 'answersFile'];

/** Fields only the Chat Completions providers read. */
const CHAT_COMPLETIONS_ONLY = ['jsonMode'];

/**
 * The `model.llm` fields the chosen provider does not read, to leave out of its form.
 *
 * @example
 * ```ts
 * modelFieldsHidden({ provider: 'scripted' }, ['provider', 'model', 'answers']); // ['model']
 * ```
 */
export function modelFieldsHidden(config: Readonly<Record<string, unknown>>, fields: readonly string[]): string[] {
  const provider = typeof config.provider === 'string' ? config.provider : DEFAULT_PROVIDER;
  if (provider === 'scripted') return fields.filter((field) => field !== 'provider' && !SCRIPTED_FIELDS.includes(field));
  const hidden = [...SCRIPTED_FIELDS, ...(provider === 'anthropic' ? CHAT_COMPLETIONS_ONLY : [])];
  return fields.filter((field) => hidden.includes(field));
}
