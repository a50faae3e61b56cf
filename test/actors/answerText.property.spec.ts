import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAnswerTextExtractor } from '../../src/actors/models/answerText.js';

// The live view of an answer is its text for people: a final answer's message, decoded, however the
// stream cuts the JSON; nothing of a tool decision; any other text as it came.

/** `text` cut at `cuts` and pushed through a new extractor; what it shows, piece by piece. */
function shownPieces(text: string, cuts: readonly number[]): string[] {
  const extractor = createAnswerTextExtractor();
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let at = 0;
  for (const point of [...points, text.length]) {
    out.push(extractor.push(text.slice(at, point)));
    at = point;
  }
  out.push(extractor.flush());
  return out;
}

const shown = (text: string, cuts: readonly number[]) => shownPieces(text, cuts).join('');

const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string({ maxLength: 8, unit: 'grapheme' }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), tie('value'), { maxKeys: 3 })),
})).value;
/** Any text a message may hold: quotes, backslashes, control characters, emoji (surrogate pairs). */
const messageText = fc.string({ maxLength: 60, unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\t', '\u0000', 'é', '😀', '{', '}', ' '), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' })) });
const otherMembers = fc.dictionary(fc.constantFrom('confidence', 'thought', 'reflection', 'decision', 'input', 'output', 'tool', 'x'), json, { maxKeys: 4 });
const cuts = fc.array(fc.nat(), { maxLength: 30 });

/** Serialises `members` in order, optionally indented, with `\u` escapes for some characters. */
function serialise(members: readonly (readonly [string, unknown])[], indent: number | undefined, escapeAll: boolean): string {
  const text = JSON.stringify(Object.fromEntries(members), null, indent);
  return escapeAll ? text.replace(/[^\x20-\x7e\n]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replace(/é/g, '\\u00e9') : text;
}

describe('createAnswerTextExtractor (property)', () => {
  it('should yield exactly the message of any final answer, however it is split, wherever its members are', () => {
    fc.assert(
      fc.property(messageText, otherMembers, fc.nat(), fc.constantFrom(undefined, 1, 2), fc.boolean(), cuts, (message, others, at, indent, escapeAll, points) => {
        const members: [string, unknown][] = Object.entries(others);
        members.splice(at % (members.length + 1), 0, ['message', message]);
        members.splice((at >> 3) % (members.length + 1), 0, ['action', 'final']);
        const answer = serialise(members, indent, escapeAll);
        expect(JSON.parse(answer)).toMatchObject({ action: 'final', message });
        expect(shown(answer, points)).toBe(message);
      }),
    );
  });

  it('should yield nothing of any other decision, even with a message or a nested "action": "final"', () => {
    const decision = fc.constantFrom('tool', 'escalate', 'request_info', 'delegate');
    fc.assert(
      fc.property(decision, messageText, otherMembers, fc.nat(), fc.constantFrom(undefined, 1), cuts, (action, message, others, at, indent, points) => {
        const members: [string, unknown][] = [...Object.entries(others), ['input', { action: 'final', message: 'not this' }]];
        members.splice(at % (members.length + 1), 0, ['message', message]);
        members.splice((at >> 2) % (members.length + 1), 0, ['action', action]);
        expect(shown(serialise(members, indent, false), points)).toBe('');
      }),
    );
  });

  it('should pass any text that does not start with "{" through unchanged, without its thought', () => {
    const plain = fc.string({ maxLength: 80 }).filter((text) => !text.trimStart().startsWith('{') && !/thought|reflection/i.test(text));
    fc.assert(
      fc.property(plain, cuts, (text, points) => {
        expect(shown(text, points)).toBe(text);
      }),
    );
    expect(shown('Thought: secret plan\nFinal Answer: Shipped.', [3, 11, 20])).toBe('Final Answer: Shipped.');
  });

  it('should show a final message as it grows, before the answer ends', () => {
    const pieces = shownPieces('{"action":"final","message":"Order A-1 shipped ', [10, 28, 36]);
    expect(pieces.filter((piece) => piece !== '').length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('Order A-1 shipped ');
  });

  it('should decode an escape cut anywhere across pieces into its character', () => {
    const answer = '{"action":"final","message":"a\\nb\\"c\\u0041d\\\\e\\ud83d\\ude00f"}';
    for (let cut = 1; cut < answer.length; cut++) expect(shown(answer, [cut]), `cut at ${cut}`).toBe('a\nb"cAd\\e😀f');
  });

  it('should stop showing when the JSON breaks, and show only what came before', () => {
    expect(shown('{"action":"final","message":"partly"} trailing garbage', [5, 30])).toBe('partly');
    expect(shown('{"action":"final","message":"ok so far", oops', [12, 40])).toBe('ok so far');
    expect(shown('{oops "action":"final","message":"never"}', [3])).toBe('');
  });

  it("should yield the message of a final answer inside a provider's decision wrapper, and nothing of a wrapped tool call, however it is split", () => {
    fc.assert(
      fc.property(messageText, cuts, (message, at) => {
        const final = JSON.stringify({ decision: { action: 'final', message, confidence: 0.9, output: null } });
        const tool = JSON.stringify({ decision: { action: 'tool', tool: 'lookup', input: { message }, confidence: 0.9, message } });
        expect(shown(final, at)).toBe(message);
        expect(shown(tool, at)).toBe('');
      }),
    );
  });
});
