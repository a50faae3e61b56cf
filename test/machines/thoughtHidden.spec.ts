import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildAnswerRules } from '../../src/runtime/answerRules.js';
import { answerForLog } from '../../src/validation/answerForLog.js';
import { validateModelAnswer } from '../../src/validation/validateModelAnswer.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { resumeRun } from '../../src/runtime/runAgent.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { agentConfig, countingTool, runScripted } from '../support/harness.js';

const echo = countingTool().tool;
const rules = buildAnswerRules(['echo'], [echo], { maxChars: 4000, maxDepth: 16 });
const SECRET = 'PRIVATE-REASONING-7f3a';

/** What judging `text` gives: 'ok' or the error code. */
function verdictOf(text: string): string {
  const verdict = validateModelAnswer(text, rules);
  return verdict.ok ? 'ok' : verdict.error.code;
}

/** What a resumed run judges from the logged answer. */
function loggedVerdict(text: string): string {
  const logged = answerForLog(text, validateModelAnswer(text, rules), rules, false);
  return logged.rejection ? logged.rejection.code : verdictOf(logged.text);
}

describe('the model’s thought, with debug off', () => {
  it.each([
    ['a valid tool answer', { action: 'tool', tool: 'echo', input: { text: 'a' }, confidence: 0.5, thought: SECRET }],
    ['a valid final answer', { action: 'final', message: 'hi', confidence: 0.9, thought: SECRET }],
    ['an answer with a tool not allowed', { action: 'tool', tool: 'rm', input: {}, confidence: 0.5, thought: SECRET }],
    ['an answer whose thought is not a string', { action: 'final', message: 'hi', thought: { why: SECRET } }],
    ['an answer with an unknown member', { action: 'final', mood: 'x', thought: SECRET }],
  ])('should keep %s’s verdict and leave its thought out of the log', (_name, answer) => {
    const text = JSON.stringify(answer);
    const logged = answerForLog(text, validateModelAnswer(text, rules), rules, false);
    expect(logged.text).not.toContain(SECRET);
    expect(logged.thoughtHidden).toBe(true);
    expect(loggedVerdict(text)).toBe(verdictOf(text));
  });

  it.each([
    ['not JSON', `{"action":"final","thought":"${SECRET}"`],
    ['duplicate keys', `{"action":"final","thought":"${SECRET}","action":"tool"}`],
    ['too deep', `{"thought":"${SECRET}","x":${'['.repeat(40)}${']'.repeat(40)}}`],
    ['a thought spelled with escapes', `{"action":"final","\\u0074hought":"${SECRET}",}`],
    ['too large', `{"action":"final","thought":"${SECRET}","message":"${'x'.repeat(5000)}"}`],
  ])('should withhold an answer that is %s and may hold a thought, logging its verdict', (_name, text) => {
    const logged = answerForLog(text, validateModelAnswer(text, rules), rules, false);
    expect(logged.text).not.toContain(SECRET);
    expect(logged.rejection?.code).toBe(verdictOf(text));
  });

  it('should keep answers without a thought exactly as received', () => {
    const text = '{ "action": "final", "message": "hi" }';
    expect(answerForLog(text, validateModelAnswer(text, rules), rules, false)).toEqual({ text });
  });

  it('should keep an unparsed answer whose backslash spells no escape (`\\U`) as received', () => {
    const text = '\\U';
    expect(answerForLog(text, validateModelAnswer(text, rules), rules, false)).toEqual({ text });
  });

  it('should keep the thought in debug', () => {
    const text = JSON.stringify({ action: 'final', message: 'hi', thought: SECRET });
    expect(answerForLog(text, validateModelAnswer(text, rules), rules, true).text).toContain(SECRET);
  });

  it('should give a resumed run the same verdict as the answer received, for any answer', () => {
    const member = fc.oneof(
      fc.constant(['action', fc.constantFrom('tool', 'final', 'dance')] as const),
      fc.constant(['tool', fc.constantFrom('echo', 'rm')] as const),
      fc.constant(['input', fc.oneof(fc.constant({}), fc.constant({ text: 'a' }), fc.constant({ x: 1 }))] as const),
      fc.constant(['confidence', fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }), fc.constant(0.5))] as const),
      fc.constant(['message', fc.string()] as const),
      fc.constant(['thought', fc.oneof(fc.constant(SECRET), fc.integer(), fc.constant([SECRET]))] as const),
    );
    const answers = fc
      .array(member.chain(([key, value]) => value.map((v) => [key, v] as const)), { maxLength: 7 })
      .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);
    const anyText = fc.oneof(answers, answers.map((t) => t.slice(0, -1)), fc.string());
    fc.assert(
      fc.property(anyText, (text) => {
        const logged = answerForLog(text, validateModelAnswer(text, rules), rules, false);
        expect(loggedVerdict(text)).toBe(verdictOf(text));
        // (A text without the secret cannot have it in its logged form either.)
        expect(logged.text).not.toContain(SECRET);
      }),
      { numRuns: 500 },
    );
  });

  it('should not put the thought in the log of a run, and a run resumed after the answer ends the same way', async () => {
    const answers = [
      { action: 'tool', tool: 'echo', input: { text: 'a' }, confidence: 0.5, thought: SECRET },
      { action: 'final', message: 'done', confidence: 0.9, thought: SECRET },
    ];
    const { events, result } = await runScripted({ answers });
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(result.envelope)).not.toContain(SECRET);

    // Crashed right after the second answer was logged: the resumed run judges the logged text.
    const cut = events.findLastIndex((event) => event.type === 'model.answered');
    const store = createMemoryEventStore();
    for (const event of events.slice(0, cut + 1)) await store.append(event);
    const actors = serveActors({ model: createScriptedModel([]), tools: [echo] });
    try {
      const resumed = await resumeRun({ ...actors, agent: agentConfig(), store, events: events.slice(0, cut + 1) }).result;
      expect(resumed.outcome).toEqual(result.outcome);
    } finally {
      await actors.close();
    }
  });
});
