#!/usr/bin/env node
// `npm run bench`: measures, in one process, (1) folding a 10,000-event log, (2) the heap held
// by an idle run, (3) the REACT loop against baselines doing the same model and tool calls with the
// same validation, measured in alternating rounds so each sees the same machine: a bare async loop
// (the floor), XState running this statechart's shape with empty actions, and a bare XState machine
// invoking fromPromise actors (what an XState user would write); then the distributed benches.
// Prints figures, their ratios to the baselines of the same run, and each target of issue 13 with
// its figure and ratio (`target:` lines). Wall-clock figures on a shared machine vary with its load
// (printed): the ratios to the same run's baselines are what to compare between runs.
import { performance } from 'node:perf_hooks';
import { createScriptedModel } from '../dist/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../dist/events/memoryEventStore.js';
import { fold } from '../dist/events/evolve.js';
import { createRunPathCheck } from '../dist/events/runPath.js';
import { serveActors } from '../dist/runtime/embeddedActors.js';
import { startRun } from '../dist/runtime/runAgent.js';
import { buildAnswerRules } from '../dist/runtime/answerRules.js';
import { validateModelAnswer } from '../dist/validation/validateModelAnswer.js';
import os from 'node:os';
import { assign, createActor, emit, fromCallback, fromPromise, sendTo, setup } from 'xstate';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 1500);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const loadAverage = () => `load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`;
/** One line per target of issue 13: its figure and how it stands against the target. */
const target = (what, figure, ratio, note) => console.log(`target: ${what}: ${figure} (${ratio}${note ? `; ${note}` : ''})`);

const noop = {
  name: 'noop',
  description: 'does nothing',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  execute: () => null,
};
const agentFor = (iterations) => ({ strategy: 'react', maxIterations: iterations, allowedTools: ['noop'], stopConditions: [], debug: false });
const scriptFor = (iterations) => [
  ...Array.from({ length: iterations - 1 }, (_, i) => ({ action: 'tool', tool: 'noop', input: { n: i }, confidence: 0.5 })),
  { action: 'final', message: 'done', confidence: 1 },
];

// 1. Fold, first, while the fold's code has seen no other event shapes.
{
  const timestamp = '2026-01-01T00:00:00.000Z';
  const runLog = (traceId, iterations, finished) => {
    const events = [{ type: 'run.started', iteration: 0, data: { input: 'x', startedAt: timestamp, agent: agentFor(20), tools: [] } }];
    for (let iteration = 1; iteration <= iterations; iteration++) {
      const key = `${traceId}:${iteration}`;
      events.push({ type: 'model.requested', iteration, data: { prompt: 'p' } });
      events.push({ type: 'model.answered', iteration, data: { text: '{"action":"tool"}', durationMs: 1 } });
      events.push({ type: 'tool.requested', iteration, data: { tool: 'noop', input: { n: iteration }, confidence: 0.5, idempotencyKey: key } });
      events.push({ type: 'tool.completed', iteration, data: { tool: 'noop', idempotencyKey: key, ok: true, output: null, durationMs: 1 } });
    }
    if (finished) events.push({ type: 'run.completed', iteration: iterations, data: { outcome: { status: 'escalate', reason: 'iteration_limit' } } });
    // As read back from a log file: through JSON.
    return JSON.parse(JSON.stringify(events.map((e, i) => ({ id: `${traceId}:${i + 1}`, traceId, seq: i + 1, type: e.type, time: timestamp, iteration: e.iteration, data: e.data }))));
  };
  // The longest runs there can be (20 iterations, 82 events each): 122 of them make 10,004 events.
  const runs = Array.from({ length: 122 }, (_, r) => runLog(`r${r}`, 20, true));
  const oneRun = runLog('long', 2500, false).slice(0, 10_000);
  const time = (fn) => {
    for (let i = 0; i < 5; i++) fn();
    return median(
      Array.from({ length: 21 }, () => {
        const start = performance.now();
        fn();
        return performance.now() - start;
      }),
    );
  };
  console.log('Fold (median of 21)');
  console.log(`  10,004 events: 122 runs of 20 iterations (the longest runs) : ${time(() => runs.forEach((events) => fold(events))).toFixed(2)} ms (target ≤ 20 ms)`);
  console.log(`  10,000 events of one 2,500-iteration run (past any limit)  : ${time(() => fold(oneRun)).toFixed(2)} ms`);
  // What every reader and the JSONL writer add to it: the check that the log is a path the
  // statechart can take, over the same events, against the fold measured in the same rounds.
  const check = (events) => {
    const path = createRunPathCheck();
    for (const event of events) if (path.next(event) !== undefined) throw new Error(`bench log refused at ${event.seq}`);
  };
  const foldMs = time(() => runs.forEach((events) => fold(events)));
  const checkMs = time(() => runs.forEach(check));
  console.log(`  the path check over the 10,004 events                       : ${checkMs.toFixed(2)} ms (${(checkMs / foldMs).toFixed(2)}× the fold, ${foldMs.toFixed(2)} ms this round)`);
}

// 2. Heap per idle run: runs waiting on a model that has not answered.
{
  const idleModel = { kind: 'idle', complete: (_request, signal) => new Promise((resolve) => signal.addEventListener('abort', resolve)) };
  const actors = serveActors({ model: idleModel, tools: [noop] });
  const store = createMemoryEventStore();
  // What a process allocates once, with its first runs (compiled validators, caches), is not any
  // run's: a few runs start and end first, so the figure is what one more idle run holds.
  const first = Array.from({ length: 50 }, (_, i) => startRun({ ...actors, agent: agentFor(20), store, input: 'idle', traceId: `first-${i}` }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (const run of first) run.abort('bench warm-up over');
  await Promise.all(first.map((run) => run.result));
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const runs = [];
  for (let i = 0; i < 2000; i++) runs.push(startRun({ ...actors, agent: agentFor(20), store, input: 'idle', traceId: `idle-${i}` }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  global.gc?.();
  const after = process.memoryUsage().heapUsed;
  const waiting = runs.filter((run) => run.actor()?.getSnapshot().value === 'awaitingModel').length;
  const perRun = (after - before) / 2000 / 1024;
  console.log('Memory');
  console.log(
    `  heap per idle run (2,000 runs awaiting the model, their events included): ${perRun.toFixed(1)} KiB` +
      `${global.gc ? '' : ' (run with --expose-gc for a stable figure)'}; ${waiting} of 2000 waiting`,
  );
  target('heap per idle run ≤ 12 KiB', `${perRun.toFixed(1)} KiB`, `${(perRun / 12).toFixed(2)}× the target`);
  for (const run of runs) run.abort('bench over');
  await Promise.all(runs.map((run) => run.result));
  await actors.close();
}

// 3. The loop.
async function measureLoop(iterations) {
  const script = scriptFor(iterations);
  const model = createScriptedModel(script);
  const agent = agentFor(iterations);
  const rules = buildAnswerRules(['noop'], [noop]);
  const actors = serveActors({ model, tools: [noop] });
  const neverAborted = new AbortController().signal;
  let counter = 0;

  /** The floor: the same model and tool calls, the same validation, an in-memory log. */
  const bare = async () => {
    const log = [];
    for (let iteration = 1; iteration <= iterations; iteration++) {
      const { text } = await model.complete({ traceId: 'b', iteration, messages: [] }, neverAborted);
      const verdict = validateModelAnswer(text, rules);
      log.push({ type: 'answered', iteration, text });
      if (!verdict.ok || verdict.answer.action === 'final') break;
      const output = await noop.execute(verdict.answer.input, {});
      log.push({ type: 'tool', iteration, output });
    }
  };
  const redflow = async (store) => {
    const result = await startRun({ ...actors, agent, store, input: 'bench', traceId: `run-${++counter}` }).result;
    if (result.outcome.reason !== 'final_answer') throw new Error(`unexpected outcome ${JSON.stringify(result.outcome)}`);
  };
  /** The README's library path: a model, its actors and a store made for each run, which gets a random trace id. */
  const libraryPath = async () => {
    const served = serveActors({ model: createScriptedModel(script), tools: [noop] });
    const result = await startRun({ ...served, agent, store: createMemoryEventStore(), input: 'bench' }).result;
    await served.close();
    if (result.outcome.reason !== 'final_answer') throw new Error(`unexpected outcome ${JSON.stringify(result.outcome)}`);
  };
  const perIteration = async (body) => {
    const start = performance.now();
    for (let i = 0; i < RUNS; i++) await body();
    return ((performance.now() - start) * 1000) / (RUNS * iterations);
  };

  /**
   * The XState floor of this statechart's shape: the same states, eventless transitions, one
   * long-lived transport actor, and an assign + emit per recorded transition, with empty bodies.
   */
  const shape = setup({
    actors: {
      transport: fromCallback(({ sendBack, receive }) => {
        receive((command) => void Promise.resolve().then(() => sendBack(command.type === 'model' ? { type: 'model.answer' } : { type: 'tool.result' })));
      }),
    },
    actions: {
      record: assign(({ context }) => ({ n: context.n + 1 })),
      publish: emit(({ context }) => ({ type: 'fact', n: context.n })),
    },
  }).createMachine({
    context: { n: 0, iteration: 1 },
    invoke: { id: 'transport', src: 'transport' },
    initial: 'awaitingModel',
    states: {
      awaitingModel: { entry: sendTo('transport', { type: 'model' }), on: { 'model.answer': { target: 'validating', actions: ['record', 'publish'] } } },
      validating: {
        always: [
          { guard: ({ context }) => context.iteration >= iterations, target: 'done', actions: ['record', 'publish'] },
          { target: 'awaitingTool', actions: ['record', 'publish'] },
        ],
      },
      awaitingTool: { entry: sendTo('transport', { type: 'tool' }), on: { 'tool.result': { target: 'checkingStop', actions: ['record', 'publish'] } } },
      checkingStop: { always: { target: 'awaitingModel', actions: [assign(({ context }) => ({ iteration: context.iteration + 1 })), 'record', 'publish'] } },
      done: { type: 'final' },
    },
  });
  const xstateShape = () =>
    new Promise((resolve) => {
      const actor = createActor(shape);
      actor.on('fact', () => undefined);
      actor.subscribe((snapshot) => snapshot.status === 'done' && resolve());
      actor.start();
    });

  /**
   * A bare XState machine doing the same loop as an XState user would write it: the model and the
   * tool invoked as fromPromise actors, the answer validated the same way, an in-memory log; no
   * event log, no replay, no resume.
   */
  const bareMachine = setup({
    actors: {
      model: fromPromise(({ input, signal }) => model.complete({ traceId: 'x', iteration: input.iteration, messages: [] }, signal)),
      tool: fromPromise(async ({ input }) => noop.execute(input, {})),
    },
  }).createMachine({
    context: () => ({ iteration: 1, verdict: undefined, log: [] }),
    initial: 'awaitingModel',
    states: {
      awaitingModel: {
        invoke: {
          src: 'model',
          input: ({ context }) => ({ iteration: context.iteration }),
          onDone: {
            target: 'validating',
            actions: assign(({ context, event }) => {
              context.log.push({ type: 'answered', iteration: context.iteration, text: event.output.text });
              return { verdict: validateModelAnswer(event.output.text, rules) };
            }),
          },
        },
      },
      validating: {
        always: [{ guard: ({ context }) => !context.verdict.ok || context.verdict.answer.action === 'final', target: 'done' }, { target: 'awaitingTool' }],
      },
      awaitingTool: {
        invoke: {
          src: 'tool',
          input: ({ context }) => context.verdict.answer.input,
          onDone: {
            target: 'checkingStop',
            actions: assign(({ context, event }) => {
              context.log.push({ type: 'tool', iteration: context.iteration, output: event.output });
              return {};
            }),
          },
        },
      },
      checkingStop: { always: { target: 'awaitingModel', actions: assign(({ context }) => ({ iteration: context.iteration + 1 })) } },
      done: { type: 'final' },
    },
  });
  const bareXState = () =>
    new Promise((resolve, reject) => {
      const actor = createActor(bareMachine);
      actor.subscribe({ next: (snapshot) => snapshot.status === 'done' && resolve(), error: reject });
      actor.start();
    });

  for (let i = 0; i < 300; i++) {
    await xstateShape();
    await bareXState();
    await bare();
    await redflow(createMemoryEventStore());
    await libraryPath();
  }
  const rounds = { base: [], shape: [], bareXState: [], core: [], library: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rounds.base.push(await perIteration(bare));
    rounds.shape.push(await perIteration(xstateShape));
    rounds.bareXState.push(await perIteration(bareXState));
    // A store per round, as a process serving runs would hold them.
    const store = createMemoryEventStore();
    rounds.core.push(await perIteration(() => redflow(store)));
    rounds.library.push(await perIteration(libraryPath));
  }
  await actors.close();
  return { ...Object.fromEntries(Object.entries(rounds).map(([name, values]) => [name, median(values)])), bestCore: Math.min(...rounds.core) };
}

console.log(`REACT loop, embedded, in-memory log, validation on, zero-latency model, no-op tool (median of ${ROUNDS} alternating rounds; ${loadAverage()})`);
for (const iterations of [20, 3]) {
  const { base, shape, bareXState, core, bestCore, library } = await measureLoop(iterations);
  console.log(`  runs of ${iterations} iterations, µs per iteration:`);
  console.log(`    bare async loop, same calls and validation         : ${base.toFixed(1)}`);
  console.log(`    XState, this statechart's shape, empty work         : ${shape.toFixed(1)}  (${(shape / base).toFixed(0)}× the bare loop)`);
  console.log(`    bare XState machine, fromPromise actors, same work  : ${bareXState.toFixed(1)}  (${(bareXState / base).toFixed(0)}× the bare loop)`);
  console.log(`    redflow, actors and store kept                      : ${core.toFixed(1)}  (best ${bestCore.toFixed(1)}; ${(core / shape).toFixed(2)}× the XState shape, ${(core / bareXState).toFixed(2)}× the bare XState machine)`);
  console.log(`    redflow, actors and store made per run (README)     : ${library.toFixed(1)}  (${(library / shape).toFixed(2)}× the XState shape, ${(library / bareXState).toFixed(2)}× the bare XState machine)`);
  if (iterations === 20) {
    target('embedded loop ≤ 40 µs per iteration, per-run setup included (runs of 20 iterations, the README\'s library path)', `${library.toFixed(1)} µs`, `${(library / 40).toFixed(2)}× the target`, loadAverage());
    target('embedded loop no dearer than a bare XState machine doing the same loop', `${library.toFixed(1)} µs against ${bareXState.toFixed(1)} µs`, `${(library / bareXState).toFixed(2)}× the bare XState machine, target ≤ 1`);
  }
}

// 4. Distributed mode (needs nats-server -js; prints a note and skips otherwise).
await import('./distributed.mjs');

// 5. Then, each in a process of its own (distributed.mjs ends the process when NATS is absent),
// `npm run bench` runs bench/load.mjs (1,000 concurrent distributed runs), bench/takeover.mjs (a
// core worker killed under load), bench/serve.mjs (`redflow serve` against the embedded runtime)
// and bench/redaction.mjs.
