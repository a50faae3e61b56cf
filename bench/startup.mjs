#!/usr/bin/env node
// How fast `redflow` starts, each figure next to its baseline measured in the same rounds:
// `redflow --version` and `--help` against `node -e 0`; `import 'redflow'` against
// `import 'xstate'` (each a fresh process); the demo (`redflow run` of order-status, scripted, two
// tool modules) and `npm run demo` (the same run started by npm) against `node -e 0`. Rounds alternate the commands so each sees the same machine.
// Prints the median and range of each over the rounds and the ratio of medians. Run `npm run build` first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'bin/redflow.js');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'redflow-startup-bench-'));

const commands = {
  'node -e 0': ['-e', '0'],
  'redflow --version': [cli, '--version'],
  'redflow --help': [cli, '--help'],
  "import 'xstate'": ['--input-type=module', '-e', "await import('xstate')"],
  "import 'redflow'": ['--input-type=module', '-e', "await import('redflow')"],
  'demo (redflow run order-status)': [cli, 'run', path.join(root, 'examples/order-status/flow.json'), '--input', 'Where is order A-1001?', '--log', 'LOG'],
  // What a newcomer types: npm's own start and its shell come on top of the run (target: 0.4 s).
  'npm run demo': ['NPM', 'run', '--silent', 'demo', '--', '--log', 'LOG'],
};

const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, args] of Object.entries(commands)) {
    const argv = args.map((arg) => (arg === 'LOG' ? path.join(scratch, `${name.replace(/\W+/g, '-')}-${round}.jsonl`) : arg));
    const started = performance.now();
    const [command, commandArgs] = argv[0] === 'NPM' ? ['npm', argv.slice(1)] : [process.execPath, argv];
    const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'ignore' });
    times[name].push(performance.now() - started);
    if (result.status !== 0) throw new Error(`${name} exited ${result.status}`);
  }
}
rmSync(scratch, { recursive: true, force: true });

const sorted = (values) => [...values].sort((a, b) => a - b);
const median = (values) => sorted(values)[Math.floor(values.length / 2)];
const ms = (value) => `${value.toFixed(0)} ms`;
const row = (name, baseline) => {
  const values = times[name];
  const [low, high] = [sorted(values)[0], sorted(values).at(-1)];
  const ratio = baseline ? `  ${(median(values) / median(times[baseline])).toFixed(2)}× ${baseline}` : '';
  console.log(`${name.padEnd(34)} median ${ms(median(values)).padStart(7)}  (${ms(low)}–${ms(high)})${ratio}`);
};

console.log(`startup, ${ROUNDS} rounds, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);
row('node -e 0');
row('redflow --version', 'node -e 0');
row('redflow --help', 'node -e 0');
row("import 'xstate'");
row("import 'redflow'", "import 'xstate'");
row('demo (redflow run order-status)', 'node -e 0');
row('npm run demo', 'node -e 0');
