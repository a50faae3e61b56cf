import { evolve, emptyEnvelope } from './dist/events/evolve.js';
import { buildMessages, buildSystemPrompt } from './dist/machines/prompt.js';
import { validateModelAnswer } from './dist/validation/validateModelAnswer.js';
import { buildAnswerRules } from './dist/runtime/answerRules.js';
const noop = { name: 'noop', description: 'x', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } };
const agent = { strategy: 'react', maxIterations: 20, allowedTools: ['noop'], stopConditions: [], debug: false };
const rules = buildAnswerRules(['noop'], [noop]);
const sys = buildSystemPrompt([noop]);
const text = JSON.stringify({ action: 'tool', tool: 'noop', input: { n: 3 }, confidence: 0.5 });
function oneRun() {
  let e = evolve(emptyEnvelope('t'), { type: 'run.started', iteration: 0, data: { input: 'x', startedAt: 'now', agent, tools: [noop] } });
  for (let i = 1; i <= 20; i++) {
    e = evolve(e, { type: 'model.requested', iteration: i, data: { prompt: sys } });
    if (!process.env.NOMSG) buildMessages(sys, e);
    e = evolve(e, { type: 'model.answered', iteration: i, data: { text, durationMs: 0, attempts: 1 } });
    validateModelAnswer(text, rules);
    e = evolve(e, { type: 'tool.requested', iteration: i, data: { tool: 'noop', input: { n: 3 }, confidence: 0.5, idempotencyKey: 't:' + i } });
    e = evolve(e, { type: 'tool.completed', iteration: i, data: { tool: 'noop', idempotencyKey: 't:' + i, ok: true, output: null, durationMs: 0 } });
  }
}
for (let i = 0; i < 2000; i++) oneRun();
let t0 = performance.now(); for (let i = 0; i < 5000; i++) oneRun(); console.log('evolve+messages+validate', ((performance.now() - t0) * 1000 / (5000 * 20)).toFixed(2), 'us/iter');
t0 = performance.now(); for (let i = 0; i < 100000; i++) validateModelAnswer(text, rules); console.log('validate', ((performance.now() - t0) * 1000 / 100000).toFixed(2));
