import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/actors/model.js';
import { MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, fitMessages } from '../../src/machines/contextBudget.js';
import { tokenCounterFor } from '../../src/runtime/tokenCounter.js';

/** One token per word: easy to reason about in examples. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const cost = (messages: readonly ChatMessage[]) =>
  messages.reduce((sum, m) => sum + words(m.content) + MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS);

const system: ChatMessage = { role: 'system', content: 'you are an agent' };
const query: ChatMessage = { role: 'user', content: 'where is my order' };
const decision = (n: number): ChatMessage => ({ role: 'assistant', content: `call lookup number ${n}` });
const observation = (n: number): ChatMessage => ({ role: 'user', content: `observation ${n} says shipped yesterday evening` });

describe('fitMessages', () => {
  it('keeps a conversation that fits as it is', () => {
    const messages = [system, query, decision(1), observation(1)];
    expect(fitMessages(messages, new Set([0, 1]), { maxTokens: cost(messages), countTokens: words })).toEqual({
      ok: true,
      messages,
      dropped: 0,
      tokens: cost(messages),
    });
  });

  it('leaves out the oldest decision with its observation first, and says so where they were', () => {
    const messages = [system, query, decision(1), observation(1), decision(2), observation(2)];
    const fitted = fitMessages(messages, new Set([0, 1]), { maxTokens: cost(messages) - 4, countTokens: words });
    expect(fitted).toMatchObject({ ok: true, dropped: 2 });
    const kept = fitted.ok ? fitted.messages : [];
    expect(kept[0]).toBe(system);
    expect(kept[1]).toBe(query);
    expect(kept[2]?.content).toBe('[2 earlier messages left out to fit the context window]');
    expect(kept.slice(3)).toEqual([decision(2), observation(2)]);
  });

  it('never leaves out the system prompt or the query, and says by how much they are over', () => {
    const messages = [system, query, decision(1), observation(1)];
    expect(fitMessages(messages, new Set([0, 1]), { maxTokens: 5, countTokens: words })).toEqual({ ok: false, tokens: cost([system, query]) + words('[2 earlier messages left out to fit the context window]') + MESSAGE_OVERHEAD_TOKENS, maxTokens: 5 });
  });

  it('for any conversation and budget: within budget, pinned kept, order kept, no observation without its call', () => {
    const history = fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 12 });
    fc.assert(
      fc.property(history, fc.integer({ min: 0, max: 300 }), (calls, maxTokens) => {
        const messages: ChatMessage[] = [system, query, ...calls.flatMap((n) => [decision(n), observation(n)])];
        const fitted = fitMessages(messages, new Set([0, 1]), { maxTokens, countTokens: words });
        // Refused exactly when even the least it could keep is over the budget.
        expect(fitted.tokens > maxTokens).toBe(!fitted.ok);
        if (!fitted.ok) return;
        expect(cost(fitted.messages)).toBe(fitted.tokens);
        expect(fitted.messages.slice(0, 2)).toEqual([system, query]);
        const rest = fitted.messages.slice(fitted.dropped > 0 ? 3 : 2);
        // What is kept is the newest calls, whole and in order.
        expect(rest).toEqual(messages.slice(messages.length - rest.length));
        expect(rest.length % 2).toBe(0);
        expect(messages.length - 2 - rest.length).toBe(fitted.dropped);
      }),
    );
  });
});

describe('tokenCounterFor', () => {
  it('counts with the model family’s real encoding, and says when the count is an estimate', async () => {
    const gpt4o = await tokenCounterFor('gpt-4o-mini');
    expect(gpt4o).toMatchObject({ encoding: 'o200k_base', exact: true });
    expect(gpt4o.countTokens('Hello world')).toBe(2);
    const claude = await tokenCounterFor('claude-sonnet-4-5');
    expect(claude).toMatchObject({ encoding: 'cl100k_base', exact: false });
    // A special token in a user's text counts as text instead of throwing.
    expect(gpt4o.countTokens('a <|endoftext|> b')).toBeGreaterThan(3);
  });
});
