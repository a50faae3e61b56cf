import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createReasoningFilter } from '../../src/actors/models/reasoningFilter.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createInProcessTransport } from '../../src/actors/inProcessTransport.js';
import { serveModel, type RunChunk } from '../../src/runtime/serveActors.js';
import { Subject } from '../../src/actors/subjects.js';

// The live pieces of an answer never show the model's thought or reflection (the log keeps them
// out unless in debug), however the stream is split.

/** `text` cut at `cuts` and pushed through a new filter; what it shows, joined. */
function shown(text: string, cuts: readonly number[]): string {
  const filter = createReasoningFilter();
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  let out = '';
  let at = 0;
  for (const point of [...points, text.length]) {
    out += filter.push(text.slice(at, point));
    at = point;
  }
  return out + filter.flush();
}

const SECRET = 'SECRETREASONING';
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), tie('value'), { maxKeys: 3 })),
})).value;
/** The members of an answer (never named like the reasoning), and where the reasoning goes among them. */
const answerParts = fc.record({
  members: fc.dictionary(fc.constantFrom('action', 'tool', 'input', 'message', 'confidence', 'decision', 'reason', '{"x"}', 'a\\"b'), json, { maxKeys: 5 }),
  thought: fc.option(fc.string({ maxLength: 20 }).map((t) => `${SECRET}${t}${SECRET}`), { nil: undefined }),
  reflection: fc.option(fc.string({ maxLength: 20 }).map((t) => `${SECRET}${t}`), { nil: undefined }),
  at: fc.nat(),
  indent: fc.constantFrom(undefined, 1, 2),
  escapeKey: fc.boolean(),
});

describe('createReasoningFilter', () => {
  it('should show a JSON answer without its reasoning, piece by piece, and everything else as written (property)', () => {
    fc.assert(
      fc.property(answerParts, fc.array(fc.nat(), { maxLength: 12 }), ({ members, thought, reflection, at, indent, escapeKey }, cuts) => {
        const entries: [string, unknown][] = Object.entries(members);
        const hidden: [string, unknown][] = [];
        if (thought !== undefined) hidden.push(['thought', thought]);
        if (reflection !== undefined) hidden.push(['reflection', reflection]);
        const all = [...entries];
        all.splice(at % (entries.length + 1), 0, ...hidden);
        let text = JSON.stringify(Object.fromEntries(all), null, indent);
        // A key spelled with an escape is the same key to a parser (and to the log).
        if (escapeKey) text = text.replace('"thought"', '"th\\u006fught"');
        const out = shown(text, cuts);
        expect(out).not.toContain(SECRET);
        // Shown as written exactly when there is nothing to hide.
        expect(out === text, out).toBe(hidden.length === 0);
        // What is left is the answer less its reasoning (a hidden last member leaves its comma before it).
        expect(JSON.parse(out.replace(/,(\s*)}$/, '$1}'))).toEqual(Object.fromEntries(entries));
      }),
    );
  });

  it('should leave out the Thought and Reflection lines of an answer in the text form', () => {
    const text = 'Thought: SECRET the user wants\nmore SECRET lines\nAction: code_search(query="auth")\nReflection: SECRET\nFinal Answer: done';
    for (const size of [1, 3, 7, 40, 1000]) {
      const pieces = Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
      const filter = createReasoningFilter();
      const out = pieces.map((p) => filter.push(p)).join('') + filter.flush();
      expect(out).toBe('Action: code_search(query="auth")\nFinal Answer: done');
    }
  });

  it('should show an answer of whitespace only as it came, once the answer is complete', () => {
    for (const text of [' ', '\n\t ', '   \n']) {
      const filter = createReasoningFilter();
      const out = [...text].map((c) => filter.push(c)).join('') + filter.flush();
      expect(out).toBe(text);
    }
  });

  it('should keep a served model\'s published pieces free of the thought, JSON or text', async () => {
    const transport = createInProcessTransport();
    const model = createScriptedModel([
      { thought: `${SECRET} I should say it`, action: 'final', message: 'Shipped.', confidence: 0.5 },
      `Thought: ${SECRET} easy\nFinal Answer: Shipped.`,
    ]);
    serveModel(transport, Subject.model('redflow', 'llm'), model, { chunkPrefix: 'redflow' });
    const published: RunChunk[] = [];
    transport.subscribe(Subject.runChunk('redflow', 't1'), (message) => published.push(message.data as RunChunk));
    for (const iteration of [1, 2]) {
      const reply = await transport.request<unknown, { text: string }>(Subject.model('redflow', 'llm'), { traceId: 't1', iteration, messages: [] }, { timeoutMs: 1000 });
      expect(reply.ok && reply.data.text).toContain(SECRET);
    }
    await new Promise((resolve) => setImmediate(resolve));
    // The live view is the answers' text: the JSON answer's message, the text answer less its thought.
    expect(published.filter((c) => c.iteration === 1).map((c) => c.text).join('')).toBe('Shipped.');
    expect(published.filter((c) => c.iteration === 2).map((c) => c.text).join('')).toBe('Final Answer: Shipped.');
    await transport.close();
  });
});
