#!/usr/bin/env node
// `npm run bench`: measures, in one process and one run, the REACT loop against a bare async loop
// doing the same validation (the floor), the fold of a 10,000-event log, and the heap per idle run.
// Prints ratios against the baseline measured in the same run; numbers vary by machine.
import { performance } from 'node:perf_hooks';
import { createScriptedModel } from '../dist/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../dist/events/memoryEventStore.js';
import { fold } from '../dist/events/evolve.js';
import { serveActors } from '../dist/runtime/embeddedActors.js';
import { startRun } from '../dist/runtime/runAgent.js';
import { buildAnswerRules } from '../dist/runtime/answerRules.js';
import { validateModelAnswer } from '../dist/validation/validateModelAnswer.js';

const ITERATIONS_PER_RUN = 20;
const agent = { strategy: 'react', maxIterations: ITERATIONS_PER_RUN, allowedTools: ['noop'], stopConditions: [], debug: false };
const noop = {
  name: 'noop',
  description: 'does nothing',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  execute: () => null,
};
const answers = [
  ...Array.from({ length: ITERATIONS_PER_RUN - 1 }, (_, i) => ({ action: 'tool', tool: 'noop', input: { n: i }, confidence: 0.5 })),
  { action: 'final', message: 'done', confidence: 1 },
];
const model = createScriptedModel(answers);
const neverAborted = new AbortController().signal;

/** The floor: the same model and tool calls and the same validation, in a plain loop. */
async function bareLoop(rules) {
  const log = [];
  for (let iteration = 1; iteration <= ITERATIONS_PER_RUN; iteration++) {
    const { text } = await model.complete({ traceId: 'b', iteration, messages: [] }, neverAborted);
    const verdict = validateModelAnswer(text, rules);
    log.push({ type: 'answered', iteration, text });
    if (!verdict.ok) break;
    if (verdict.answer.action === 'final') break;
    const output = await noop.execute(verdict.answer.input, {});
    log.push({ type: 'tool', iteration, output });
  }
  return log;
}

let runCounter = 0;
async function redflowLoop(actors, store, n) {
  const run = startRun({ ...actors, agent, store, input: 'bench', traceId: `run-${n}-${++runCounter}` });
  const result = await run.result;
  if (result.outcome.reason !== 'final_answer') throw new Error(`unexpected outcome ${JSON.stringify(result.outcome)}`);
}

async function timePerIteration(label, runs, body) {
  // Warm up, then measure.
  for (let i = 0; i < Math.min(200, runs); i++) await body(i);
  const start = performance.now();
  for (let i = 0; i < runs; i++) await body(i);
  const micros = ((performance.now() - start) * 1000) / (runs * ITERATIONS_PER_RUN);
  return { label, micros };
}

const rules = buildAnswerRules(['noop'], [noop]);
const actors = serveActors({ model, tools: [noop] });
const runs = Number(process.env.BENCH_RUNS ?? 3000);

const results = [];
for (let round = 0; round < 3; round++) {
  const store = createMemoryEventStore();
  results.push({
    base: await timePerIteration('bare loop', runs, () => bareLoop(rules)),
    redflow: await timePerIteration('redflow', runs, (i) => redflowLoop(actors, store, `${round}-${i}`)),
  });
}
const best = (key) => Math.min(...results.map((r) => r[key].micros));
const base = best('base');
const core = best('redflow');
console.log('REACT loop, embedded, in-memory log, zero-latency model, no-op tool (best of 3 rounds)');
console.log(`  bare async loop, same validation : ${base.toFixed(1)} µs/iteration`);
console.log(`  redflow statechart               : ${core.toFixed(1)} µs/iteration  (${(core / base).toFixed(1)}× the floor; overhead ${(core - base).toFixed(1)} µs; target ≤ 40 µs)`);

// Fold: one 10,000-event log.
function syntheticLog(count) {
  const events = [
    { type: 'run.started', iteration: 0, data: { input: 'x', startedAt: '2026-01-01T00:00:00.000Z', agent, tools: [] } },
  ];
  let iteration = 0;
  while (events.length < count) {
    iteration++;
    const key = `t:${iteration}`;
    events.push({ type: 'model.requested', iteration, data: { prompt: 'p' } });
    events.push({ type: 'model.answered', iteration, data: { text: '{"action":"tool"}', durationMs: 1 } });
    events.push({ type: 'tool.requested', iteration, data: { tool: 'noop', input: { n: iteration }, confidence: 0.5, idempotencyKey: key } });
    events.push({ type: 'tool.completed', iteration, data: { tool: 'noop', idempotencyKey: key, ok: true, output: null, durationMs: 1 } });
  }
  return events.slice(0, count).map((e, i) => ({ ...e, id: `t:${i + 1}`, traceId: 't', seq: i + 1, time: '2026-01-01T00:00:00.000Z' }));
}
const bigLog = syntheticLog(10_000);
const manyRuns = [];
for (let r = 0; r < 500; r++) manyRuns.push(syntheticLog(20).map((e) => ({ ...e, traceId: `r${r}` })));
const timeFold = (fn) => {
  for (let i = 0; i < 5; i++) fn();
  const samples = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
};
const oneRun = timeFold(() => fold(bigLog));
const perRun = timeFold(() => manyRuns.forEach((events) => fold(events)));
console.log('Fold (median of 20)');
console.log(`  10,000 events of one run (2,500 tool calls) : ${oneRun.toFixed(2)} ms (target ≤ 20 ms)`);
console.log(`  10,000 events of 500 runs of 20 events      : ${perRun.toFixed(2)} ms`);

// Heap per idle run: runs waiting on a model that has not answered.
const idleModel = { kind: 'idle', complete: (_request, signal) => new Promise((resolve) => signal?.addEventListener('abort', resolve)) };
const idleActors = serveActors({ model: idleModel, tools: [noop] });
global.gc?.();
const before = process.memoryUsage().heapUsed;
const idleRuns = [];
const idleStore = createMemoryEventStore();
for (let i = 0; i < 2000; i++) idleRuns.push(startRun({ ...idleActors, agent, store: idleStore, input: 'idle', traceId: `idle-${i}` }));
await new Promise((resolve) => setTimeout(resolve, 200));
global.gc?.();
const after = process.memoryUsage().heapUsed;
console.log('Memory');
console.log(`  heap per idle run (2,000 runs awaiting the model): ${((after - before) / 2000 / 1024).toFixed(1)} KiB${global.gc ? '' : ' (run with --expose-gc for a stable figure)'}`);
for (const run of idleRuns) run.abort('bench over');
await Promise.all(idleRuns.map((run) => run.result));
await idleActors.close();
await actors.close();
