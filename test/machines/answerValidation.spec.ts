import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { buildSystemPrompt } from '../../src/machines/prompt.js';
import { buildAnswerRules } from '../../src/runtime/answerRules.js';
import { validateModelAnswer } from '../../src/validation/validateModelAnswer.js';
import { answer, countingTool, runScripted } from '../support/harness.js';

const echoSpec = countingTool().tool;
const rules = buildAnswerRules(['echo'], [echoSpec]);
const codeOf = (text: string) => {
  const result = validateModelAnswer(text, rules);
  return result.ok ? 'ok' : result.error.code;
};

describe('model answer validation, each check with its own code', () => {
  it.each([
    ['not JSON', 'I think the answer is 42', ErrorCode.INVALID_JSON],
    ['NaN', '{"action":"final","confidence":NaN}', ErrorCode.INVALID_JSON],
    ['Infinity', '{"action":"final","confidence":Infinity}', ErrorCode.INVALID_JSON],
    ['a number too large to be finite', '{"action":"tool","tool":"echo","input":{},"confidence":1e400}', ErrorCode.CONFIDENCE_OUT_OF_RANGE],
    ['an array', '[1,2]', ErrorCode.ANSWER_NOT_OBJECT],
    ['null', 'null', ErrorCode.ANSWER_NOT_OBJECT],
    ['no action', '{"tool":"echo"}', ErrorCode.ACTION_MISSING],
    ['an unknown action', '{"action":"dance"}', ErrorCode.ACTION_UNKNOWN],
    ['an unknown property', '{"action":"final","message":"done","mood":"happy"}', ErrorCode.ANSWER_SCHEMA_MISMATCH],
    ['a tool action without confidence', '{"action":"tool","tool":"echo","input":{}}', ErrorCode.CONFIDENCE_MISSING],
    ['a tool action without tool', '{"action":"tool","input":{},"confidence":0.5}', ErrorCode.TOOL_MISSING],
    ['confidence above 1', '{"action":"tool","tool":"echo","input":{},"confidence":1.5}', ErrorCode.CONFIDENCE_OUT_OF_RANGE],
    ['confidence below 0', '{"action":"final","message":"done","confidence":-0.1}', ErrorCode.CONFIDENCE_OUT_OF_RANGE],
    ['a final answer without a message', '{"action":"final","confidence":0.9}', ErrorCode.FINAL_MESSAGE_MISSING],
    ['a final answer with an empty message', '{"action":"final","message":""}', ErrorCode.FINAL_MESSAGE_MISSING],
    ['a final answer with a blank message', '{"action":"final","message":" \\n\\t "}', ErrorCode.FINAL_MESSAGE_MISSING],
    ['a tool call without a message', '{"action":"tool","tool":"echo","input":{},"confidence":0.5}', 'ok'],
    ['a tool not allowed', '{"action":"tool","tool":"rm_rf","input":{},"confidence":0.5}', ErrorCode.TOOL_NOT_ALLOWED],
    ['input not matching the schema', '{"action":"tool","tool":"echo","input":{"text":3},"confidence":0.5}', ErrorCode.TOOL_INPUT_INVALID],
    ['input with an extra field', '{"action":"tool","tool":"echo","input":{"x":1},"confidence":0.5}', ErrorCode.TOOL_INPUT_INVALID],
    ['duplicate keys', '{"action":"final","action":"tool"}', ErrorCode.ANSWER_DUPLICATE_KEY],
    ['escaped duplicate keys', '{"action":"final","\\u0061ction":"final"}', ErrorCode.ANSWER_DUPLICATE_KEY],
    ['__proto__', '{"action":"final","__proto__":{"polluted":true}}', ErrorCode.ANSWER_FORBIDDEN_KEY],
    ['nested constructor', '{"action":"tool","tool":"echo","input":{"constructor":{"prototype":1}},"confidence":0.5}', ErrorCode.ANSWER_FORBIDDEN_KEY],
    ['a lone surrogate', '{"action":"final","message":"\ud800"}', ErrorCode.ANSWER_INVALID_TEXT],
    ['an escaped lone high surrogate', '{"action":"final","message":"\\ud800x"}', ErrorCode.ANSWER_INVALID_TEXT],
    ['an escaped lone low surrogate', '{"action":"final","message":"\\udc00"}', ErrorCode.ANSWER_INVALID_TEXT],
    ['an escaped surrogate pair', '{"action":"final","message":"\\ud83d\\ude00"}', 'ok'],
    ['an escaped backslash before u', '{"action":"final","message":"\\\\ud800"}', 'ok'],
    ['a valid final', '{"action":"final","message":"done","confidence":1}', 'ok'],
    ['a valid tool call', '{"action":"tool","tool":"echo","input":{"text":"a"},"confidence":0}', 'ok'],
    ['keys that only look alike', '{"action":"final","message":"a","thought":"b"}', 'ok'],
  ])('should judge %s (%s) as %s', (_name, text, code) => {
    expect(codeOf(text)).toBe(code);
  });

  it('should tell the model, in the prompt, that a final answer needs its message', () => {
    expect(buildSystemPrompt([])).toContain('"message": "required for final: the answer itself; optional for tool"');
  });

  it('should refuse a 10 MB answer before parsing it', () => {
    const huge = `{"action":"final","message":"${'x'.repeat(10 * 1024 * 1024)}"}`;
    expect(codeOf(huge)).toBe(ErrorCode.ANSWER_TOO_LARGE);
  });

  it('should refuse 100,000 nested arrays without overflowing the stack', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(codeOf(deep)).toBe(ErrorCode.ANSWER_TOO_DEEP);
  });

  it('should not let __proto__ in an answer reach any prototype', () => {
    codeOf('{"action":"final","__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('a run whose model answers badly', () => {
  it.each([
    ['invalid JSON', '{"action": "final",', ErrorCode.INVALID_JSON],
    ['a missing action', '{"message":"hi"}', ErrorCode.ACTION_MISSING],
    ['an unknown action', '{"action":"think"}', ErrorCode.ACTION_UNKNOWN],
    ['a tool not allowed', JSON.stringify(answer.tool('delete_everything')), ErrorCode.TOOL_NOT_ALLOWED],
    ['input not matching the schema', JSON.stringify(answer.tool('echo', { text: 42 })), ErrorCode.TOOL_INPUT_INVALID],
    ['confidence outside [0,1]', JSON.stringify(answer.tool('echo', {}, 7)), ErrorCode.CONFIDENCE_OUT_OF_RANGE],
    ['a final answer without a message', '{"action":"final"}', ErrorCode.FINAL_MESSAGE_MISSING],
  ])('should stop on %s with its own code in observability and in the log', async (_name, text, code) => {
    const echo = countingTool();
    const { result, events } = await runScripted({ answers: [text], tools: [echo.tool] });
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code } });
    expect(result.envelope.observability.outcome?.error?.code).toBe(code);
    expect(result.envelope.observability.events.at(-1)).toMatchObject({ iteration: 1, action: 'error', code });
    const last = events.at(-1);
    expect(last?.type).toBe('run.failed');
    expect(last?.data).toMatchObject({ outcome: { error: { code } } });
    expect(echo.calls).toHaveLength(0);
  });

  it('should log a 10 MB answer cut, with its length, and judge it the same on replay', async () => {
    const huge = `{"action":"final","message":"${'y'.repeat(10 * 1024 * 1024)}"}`;
    const { result, events } = await runScripted({ answers: [huge] });
    expect(result.outcome.error?.code).toBe(ErrorCode.ANSWER_TOO_LARGE);
    const answered = events.find((e) => e.type === 'model.answered');
    expect(answered?.data).toMatchObject({ originalLength: huge.length });
    expect(JSON.stringify(events).length).toBeLessThan(20_000);
  });
});
