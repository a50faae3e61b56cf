#!/usr/bin/env node
// What a fork's replayed prefix costs against running it: a 20-iteration run (the most an agent
// may take: 19 tool calls of a scripted model, then its answer) run whole with `runFlowFile`, next
// to `forkRun` of that run at iteration 20 (its 19-iteration prefix replayed from the log, one live
// model call) and at iteration 1 (nothing replayed: the whole run live again, the fork's own
// overhead). Per replayed iteration, the prefix's cost over the live run's. Each round
// runs the three in turn, on the same machine moment; prints medians, ranges and the ratios of
// medians. Run `npm run build` first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runFlowFile } from 'redflow';
import { forkRun } from 'redflow/evals';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ITERATIONS = 20;
const dir = mkdtempSync(path.join(os.tmpdir(), 'redflow-fork-bench-'));

const answers = [
  ...Array.from({ length: ITERATIONS - 1 }, (_, i) => ({ action: 'tool', tool: 'echo', input: { n: i }, confidence: 0.5 })),
  { action: 'final', message: 'counted', confidence: 0.9 },
];
writeFileSync(path.join(dir, 'answers.json'), JSON.stringify(answers));
writeFileSync(path.join(dir, 'echo.mjs'), "export default { name: 'echo', description: 'Echoes its input.', inputSchema: { type: 'object' }, execute: (input) => input };\n");
const flowPath = path.join(dir, 'flow.json');
writeFileSync(
  flowPath,
  JSON.stringify({
    id: 'fork-bench',
    version: 1,
    start: 'question',
    nodes: [
      { id: 'question', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: ITERATIONS, allowedTools: ['echo'] } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answersFile: 'answers.json' } },
      { id: 'echo', type: 'tool.module', config: { module: 'echo.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'question', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'echo' },
    ],
  }),
);

/** Milliseconds from the call to the run's end, checking it ended as the script says. */
async function timed(start) {
  const began = performance.now();
  const run = await start();
  const { outcome } = await run.finished();
  if (outcome.status !== 'done') throw new Error(`the run ended ${outcome.status}: ${JSON.stringify(outcome.error ?? outcome.reason)}`);
  return performance.now() - began;
}

const runsDir = path.join(dir, 'runs');
const parentLog = path.join(dir, 'parent.jsonl');
// The parent, and a warm-up of each path (module loading and JIT out of the figures).
await timed(() => runFlowFile({ flowPath, input: 'count', logPath: parentLog }));
const cases = {
  [`run whole (${ITERATIONS} live)`]: (round) => runFlowFile({ flowPath, input: 'count', logPath: path.join(dir, `whole-${round}.jsonl`) }),
  [`fork at ${ITERATIONS} (${ITERATIONS - 1} replayed, 1 live)`]: () => forkRun({ from: parentLog, at: ITERATIONS, runsDir }),
  [`fork at 1 (0 replayed, ${ITERATIONS} live)`]: () => forkRun({ from: parentLog, at: 1, runsDir }),
};
for (const start of Object.values(cases)) await timed(() => start('warm'));

const times = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, start] of Object.entries(cases)) times[name].push(await timed(() => start(round)));
}
rmSync(dir, { recursive: true, force: true });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${value.toFixed(0)} ms`;
const [wholeName, lateName] = Object.keys(times);
const whole = median(times[wholeName]);
console.log(`fork prefix: ${ROUNDS} rounds, load average ${os.loadavg()[0].toFixed(1)}`);
for (const [name, values] of Object.entries(times)) {
  console.log(`  ${name.padEnd(36)} median ${ms(median(values)).padStart(8)}  (${ms(Math.min(...values))}–${ms(Math.max(...values))})  ${(median(values) / whole).toFixed(2)}× the whole run`);
}
const late = median(times[lateName]);
// The late fork makes one live call of the run's ITERATIONS; the rest of its time is the prefix.
const perReplayed = (late - whole / ITERATIONS) / (ITERATIONS - 1);
console.log(`  a replayed iteration: ${perReplayed.toFixed(2)} ms, ${(perReplayed / (whole / ITERATIONS)).toFixed(2)}× a live one (${(whole / ITERATIONS).toFixed(2)} ms)`);
// An agent takes at most 20 iterations (the node schema's maxIterations), so a longer prefix is not
// measured: a replayed iteration costs the same wherever it is, so n of them cost n times one.
const live = whole / ITERATIONS;
console.log(`  a 100-iteration prefix, by these: replayed ${ms(100 * perReplayed)}, run live ${ms(100 * live)} (scripted model and echo tool: a real model's call costs far more)`);
