#!/usr/bin/env node
// Where a process's CPU went, from V8 CPU profiles (`node --cpu-prof`; for the load bench's
// workers, BENCH_LOAD_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>"): the busy time (idle and module
// loading left out), its share by module and by function (self time), of all the profiles given
// together, each sample counted as one sampling interval. Usage: node bench/profileSummary.mjs
// <file.cpuprofile>... [TOP=40 for more functions]
import { readFileSync } from 'node:fs';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.log('usage: node bench/profileSummary.mjs <file.cpuprofile>...');
  process.exit(1);
}
const byFunction = new Map();
const byModule = new Map();
let busy = 0;
const add = (map, key, micros) => map.set(key, (map.get(key) ?? 0) + micros);

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Start-up is not what a worker spends per iteration: samples under module loading are left out.
  const loading = (id) => {
    for (let at = id; at !== undefined; at = parent.get(at)) if (/node:internal\/modules|bootstrap/.test(nodes.get(at).callFrame.url)) return true;
    return false;
  };
  // Each sample counts as the profile's usual sampling interval, not as the time since the sample
  // before it: on a busy machine a process is often descheduled between two samples, and that gap
  // (up to hundreds of ms) would all go to whatever function the next sample found, making a tiny
  // function look like a few percent.
  const deltas = profile.timeDeltas.filter((delta) => delta > 0).sort((a, b) => a - b);
  const interval = deltas[deltas.length >> 1] ?? 0;
  const self = new Map();
  for (const id of profile.samples) add(self, id, interval);
  for (const [id, micros] of self) {
    const frame = nodes.get(id).callFrame;
    if (frame.functionName === '(idle)' || loading(id)) continue;
    const url = frame.url.replace(/.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|src|bench)\//, '$1/');
    const packageName = url.split('/').slice(0, url.startsWith('@') ? 2 : 1).join('/');
    const module = !frame.url ? frame.functionName || '(native)' : frame.url.includes('node_modules/') ? packageName : url;
    add(byModule, module, micros);
    add(byFunction, `${frame.functionName || '(anonymous)'} ${url}:${frame.lineNumber + 1}`, micros);
    busy += micros;
  }
}
const top = (map, count) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => `${((100 * micros) / busy).toFixed(1).padStart(5)} %  ${name}`)
    .join('\n');
console.log(`busy ${(busy / 1e6).toFixed(2)} s in ${files.length} profile(s)\nby module:\n${top(byModule, 25)}\nby function (self time):\n${top(byFunction, Number(process.env.TOP ?? 40))}`);
