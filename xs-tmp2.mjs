import { createActor, fromCallback } from 'xstate';
import { reactMachine } from './dist/machines/reactMachine.js';
import { buildAnswerRules } from './dist/runtime/answerRules.js';
const N = 20;
const noop = { name: 'noop', description: 'x', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } };
const answers = [...Array.from({ length: N - 1 }, (_, i) => JSON.stringify({ action: 'tool', tool: 'noop', input: { n: i }, confidence: 0.5 })), JSON.stringify({ action: 'final', message: 'done', confidence: 1 })];
const transport = fromCallback(({ sendBack, receive }) => {
  receive((c) => { Promise.resolve().then(() => sendBack(c.type === 'model.request' ? { type: 'model.answer', text: answers[c.request.iteration - 1], durationMs: 0, attempts: 1 } : { type: 'tool.result', result: { ok: true, output: null }, durationMs: 0 })); });
});
const machine = reactMachine.provide({ actors: { transport } });
const agent = { strategy: 'react', maxIterations: N, allowedTools: ['noop'], stopConditions: [], debug: false };
const rules = buildAnswerRules(['noop'], [noop]);
const mode = process.argv[2];
const run = (i) => new Promise((res) => { const a = createActor(machine, { input: { traceId: 't' + i, agent, tools: [noop], rules, run: { input: 'x', startedAt: 'now' } } }); a.on('fact', () => {}); a.subscribe((s) => { if (s.status === 'done') res(); }); a.start(); });
for (let i = 0; i < 500; i++) await run(i);
const t0 = performance.now();
for (let i = 0; i < 3000; i++) await run(i);
console.log(((performance.now() - t0) * 1000 / (3000 * N)).toFixed(1), 'us/iter machine only');
