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
