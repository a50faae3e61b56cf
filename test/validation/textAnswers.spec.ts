import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { buildAnswerRules } from '../../src/runtime/answerRules.js';
import { parseToolSignatures } from '../../src/validation/actionSyntax.js';
import { answerForLog } from '../../src/validation/answerForLog.js';
import { validateModelAnswer, type AnswerRules } from '../../src/validation/validateModelAnswer.js';

const segment = 'You have access to: code_search(query), read_file(path)';
const tools = parseToolSignatures(segment).map((signature) => ({
  name: signature.name,
  description: signature.name,
  inputSchema: { type: 'object', properties: Object.fromEntries(signature.params.map((p) => [p, {}])) },
}));
const rules: AnswerRules = { ...buildAnswerRules(['code_search', 'read_file'], tools), textActions: { signatures: parseToolSignatures(segment) } };

/** A verdict's answer without its thought; nothing for a refused answer. */
function withoutThought<A extends { thought?: unknown }>(verdict: { ok: true; answer: A } | { ok: false }): Omit<A, 'thought'> | undefined {
  if (!verdict.ok) return undefined;
  const { thought: _thought, ...rest } = verdict.answer;
  return rest;
}

describe('answers in the text ReAct form', () => {
  it('are judged like JSON answers: an allowed tool with its input', () => {
    expect(validateModelAnswer('Thought: search first\nAction: code_search(query="auth")', rules)).toEqual({
      ok: true,
      answer: { action: 'tool', tool: 'code_search', input: { query: 'auth' }, confidence: 1, thought: 'search first' },
    });
    expect(validateModelAnswer('Action: delete_all()', rules)).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_NOT_ALLOWED } });
  });

  it('still take the JSON answer format', () => {
    expect(validateModelAnswer('{"action":"final","message":"hi"}', rules)).toEqual({ ok: true, answer: { action: 'final', message: 'hi' } });
    expect(validateModelAnswer('{"action":"final"', rules)).toMatchObject({ ok: false, error: { code: ErrorCode.INVALID_JSON } });
  });

  it('fall back to a direct answer when the action cannot be read', () => {
    expect(validateModelAnswer('Thought: hmm\nAction: code_search(query=auth)', rules)).toEqual({
      ok: true,
      answer: { action: 'final', message: 'Action: code_search(query=auth)', thought: 'hmm' },
    });
    expect(validateModelAnswer('It is in auth.js.', rules)).toEqual({ ok: true, answer: { action: 'final', message: 'It is in auth.js.' } });
  });

  it('are refused in flows, which keep the strict JSON format', () => {
    const strict = buildAnswerRules(['code_search'], tools);
    expect(validateModelAnswer('Action: code_search(query="auth")', strict)).toMatchObject({ ok: false, error: { code: ErrorCode.INVALID_JSON } });
  });

  it('are logged without their thought unless in debug, and judged the same from the log', () => {
    const text = 'Thought: the user is angry, be careful\nAction: code_search(query="auth")';
    const verdict = validateModelAnswer(text, rules);
    const logged = answerForLog(text, verdict, rules, false);
    expect(logged).toEqual({ text: 'Action: code_search(query="auth")', thoughtHidden: true });
    expect(validateModelAnswer(logged.text, rules)).toEqual({ ok: true, answer: { action: 'tool', tool: 'code_search', input: { query: 'auth' }, confidence: 1 } });
    expect(answerForLog(text, verdict, rules, true)).toEqual({ text });
  });

  it('for any text: the logged form holds no thought and gets the same verdict, thought aside', () => {
    const piece = fc.oneof(
      fc.constantFrom('Thought: secret plan ', 'Action: code_search(query="a") ', 'Final Answer: done ', 'Action: read_file("x") ', 'Action: bad( ', '\n'),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const text = pieces.join('');
        const verdict = validateModelAnswer(text, rules);
        const logged = answerForLog(text, verdict, rules, false);
        // Every thought section goes; 'secret plan' may still be in the answer's own text when not in a thought section.
        const onlyInThought = verdict.ok && verdict.answer.thought !== undefined && !text.replace(/^[ \t]*Thought:[^\n]*/gim, '').includes('secret plan');
        expect(onlyInThought && logged.text.includes('secret plan'), logged.text).toBe(false);
        const again = logged.rejection !== undefined ? { ok: false as const, error: logged.rejection } : validateModelAnswer(logged.text, rules);
        expect(again.ok).toBe(verdict.ok);
        expect(withoutThought(again)).toEqual(withoutThought(verdict));
      }),
      { numRuns: 2000 },
    );
  });
});
