#!/usr/bin/env node
// Part of `npm run bench`: one distributed run at a time, the core here, the model and the tool
// served on NATS by another connection, the log in JetStream; against a hand-written loop making
// the same two NATS requests and the same four JetStream appends per iteration (the floor).
// Needs nats-server -js at $NATS_URL (default 127.0.0.1:4222); skipped with a note when absent.
import { performance } from 'node:perf_hooks';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../dist/nats/connect.js';
import { createNatsTransport } from '../dist/nats/natsTransport.js';
import { Storage, Subject } from '../dist/actors/subjects.js';
import { createScriptedModel } from '../dist/actors/models/scriptedModel.js';
import { openJetStreamEventStore } from '../dist/nats/jetstream/jetstreamEventStore.js';
import { serveActors } from '../dist/runtime/embeddedActors.js';
import { startRun } from '../dist/runtime/runAgent.js';
import { buildAnswerRules } from '../dist/runtime/answerRules.js';
import { validateModelAnswer } from '../dist/validation/validateModelAnswer.js';
import { buildSystemPrompt } from '../dist/machines/prompt.js';

const ITERATIONS = 20;
const RUNS = Number(process.env.BENCH_DISTRIBUTED_RUNS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const url = process.env.NATS_URL ?? '127.0.0.1:4222';
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

let core;
let actorsNc;
try {
  core = await connectNats({ servers: url, name: 'bench-core', timeoutMs: 2000 });
  actorsNc = await connectNats({ servers: url, name: 'bench-actors', timeoutMs: 2000 });
} catch (error) {
  console.log(`Distributed: skipped (no nats-server with JetStream at ${url}: ${error.message})`);
  process.exit(0);
}
const prefix = `bench${Date.now().toString(36)}`;
const noop = { name: 'noop', description: 'does nothing', inputSchema: { type: 'object', properties: { n: { type: 'number' } } }, execute: () => null };
const answers = [
  ...Array.from({ length: ITERATIONS - 1 }, (_, i) => ({ action: 'tool', tool: 'noop', input: { n: i }, confidence: 0.5 })),
  { action: 'final', message: 'done', confidence: 1 },
];
const model = createScriptedModel(answers);
const served = serveActors({ model, tools: [noop], transport: createNatsTransport(actorsNc), prefix });
await actorsNc.flush();
const transport = createNatsTransport(core);
const store = await openJetStreamEventStore(core, { prefix, storage: 'file' });
const agent = { strategy: 'react', maxIterations: ITERATIONS, allowedTools: ['noop'], stopConditions: [], debug: false };
const rules = buildAnswerRules(['noop'], served.tools);
const systemPrompt = buildSystemPrompt(served.tools);
const js = jetstream(core);
const encoder = new TextEncoder();
let counter = 0;

/** The floor: the same requests and appends, in a plain loop. */
async function handWritten() {
  const traceId = `hand-${++counter}`;
  let seq = 0;
  const append = async (type, iteration, data) => {
    seq += 1;
    const event = { id: `${traceId}:${seq}`, traceId, seq, type, time: new Date().toISOString(), iteration, data };
    await js.publish(Subject.log(prefix, traceId, type), encoder.encode(JSON.stringify(event)), { msgID: event.id });
  };
  // The same conversation the core sends: the system prompt, the input, each decision and observation.
  const messages = [{ role: 'system', content: systemPrompt }, { role: 'user', content: 'bench' }];
  for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
    await append('model.requested', iteration, { prompt: systemPrompt });
    const answer = await transport.request(served.subjects.model, { traceId, iteration, messages }, { timeoutMs: 5000 });
    await append('model.answered', iteration, { text: answer.data.text, durationMs: 0 });
    const verdict = validateModelAnswer(answer.data.text, rules);
    if (verdict.answer.action === 'final') break;
    const key = `${traceId}:${iteration}`;
    await append('tool.requested', iteration, { tool: 'noop', input: verdict.answer.input, confidence: 0.5, idempotencyKey: key });
    const result = await transport.request(served.subjects.tool('noop'), { traceId, iteration, tool: 'noop', input: verdict.answer.input, idempotencyKey: key }, { timeoutMs: 5000 });
    await append('tool.completed', iteration, { tool: 'noop', idempotencyKey: key, ok: result.ok, durationMs: 0 });
    messages.push({ role: 'assistant', content: JSON.stringify({ action: 'tool', tool: 'noop', input: verdict.answer.input }) });
    messages.push({ role: 'user', content: `Observation from noop:\n${JSON.stringify(result.data.output)}` });
  }
}

async function redflow() {
  const result = await startRun({ transport, subjects: served.subjects, tools: served.tools, agent, store, input: 'bench', traceId: `rf-${++counter}` }).result;
  if (result.outcome.reason !== 'final_answer') throw new Error(JSON.stringify(result.outcome));
}

const perIteration = async (body) => {
  const start = performance.now();
  for (let i = 0; i < RUNS; i++) await body();
  return ((performance.now() - start) * 1000) / (RUNS * ITERATIONS);
};

for (let i = 0; i < 10; i++) {
  await handWritten();
  await redflow();
}
const floors = [];
const cores = [];
for (let round = 0; round < ROUNDS; round++) {
  floors.push(await perIteration(handWritten));
  cores.push(await perIteration(redflow));
}
const floor = median(floors);
const ours = median(cores);
console.log(`Distributed, one run at a time (${ITERATIONS} iterations, NATS request/reply, JetStream file store), median of ${ROUNDS} rounds`);
console.log(`  hand-written loop, same requests and appends : ${floor.toFixed(0)} µs/iteration`);
console.log(`  redflow                                      : ${ours.toFixed(0)} µs/iteration (${(ours / floor).toFixed(2)}× the floor; target ≤ 1.25×)`);
console.log('  (1,000 concurrent runs: bench/load.mjs, next; a core worker killed under load: bench/takeover.mjs)');

await served.close();
await transport.close();
const jsm = await jetstreamManager(core);
await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
await core.drain();
await actorsNc.drain();
