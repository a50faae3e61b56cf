#!/usr/bin/env node
// Part of `npm run bench`: the distributed mode under load. 1,000 concurrent runs (4 iterations
// each: 3 tool calls and a final answer) through one nats-server, 2 core worker processes and 2
// model+tool worker processes, on this machine. The client follows its runs through one shared
// consumer (createSharedRunFollow; BENCH_LOAD_FOLLOW=per-run: a consumer per run, the default of
// startRemoteRun) and the tool is an idempotent lookup (BENCH_LOAD_TOOL=effects: a tool whose
// results are kept). Prints the aggregate iterations per second, the
// JetStream writes per iteration (trace events, tool-result KV, run records), the CPU each process
// took, and checks that every log replays whole, no event lost or duplicated; 200 runs warm the
// workers up first. Then the memory a run waiting on its tool takes in its core worker
// (BENCH_LOAD_IDLE_RUNS runs held at once, default 2,000; 0 skips it). The floor is a hand-written loop in one process making the same NATS requests
// and awaiting four appends per iteration, 1,000 at a time: the machine's and the server's capacity
// at that moment. BENCH_LOAD_ROUNDS rounds (default 3) alternate floor and redflow, each redflow
// round against the mean of the floors beside it; the median and range are printed.
// Needs nats-server -js at $NATS_URL (default 127.0.0.1:4222); skipped with a note when absent.
import { readFile, readdir, readlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../dist/nats/connect.js';
import { Storage } from '../dist/actors/subjects.js';
import { fold } from '../dist/events/evolve.js';
import { createRunPathCheck } from '../dist/events/runPath.js';
import { startRemoteRun } from '../dist/nats/cluster/remoteRun.js';
import { createSharedRunFollow } from '../dist/nats/jetstream/sharedRunFollow.js';
import { heapInUse, heapProbeArgs, readAllRuns, removeCluster, startWorker } from './clusterBench.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_LOAD_RUNS ?? 1000);
// Runs held waiting at once to measure what an idle run costs a core worker (0: not measured).
const IDLE_RUNS = Number(process.env.BENCH_LOAD_IDLE_RUNS ?? 2000);
const ROUNDS = Number(process.env.BENCH_LOAD_ROUNDS ?? 3);
const TARGET = 1500;
const SHARED_FOLLOW = process.env.BENCH_LOAD_FOLLOW !== 'per-run';
const url = process.env.NATS_URL ?? '127.0.0.1:4222';
// The tool: a lookup declared idempotent (no tool-result writes), or with BENCH_LOAD_TOOL=effects
// one with effects, whose results the tool workers keep (two KV writes per call).
const TOOL_WITH_EFFECTS = process.env.BENCH_LOAD_TOOL === 'effects';
const flowPath = path.join(ROOT, TOOL_WITH_EFFECTS ? 'test/fixtures/cluster/flow.json' : 'bench/fixtures/lookup-flow.json');
const EVENTS_PER_RUN = 16;
const ITERATIONS_PER_RUN = 4;
// Node options for the worker processes, e.g. BENCH_LOAD_NODE_ARGS=--cpu-prof to profile them.
const nodeArgs = (process.env.BENCH_LOAD_NODE_ARGS ?? '').split(' ').filter(Boolean);

let nc;
try {
  nc = await connectNats({ servers: url, name: 'bench-load', timeoutMs: 2000 });
} catch (error) {
  console.log(`Distributed load: skipped (no nats-server with JetStream at ${url}: ${error.message})`);
  process.exit(0);
}
const prefix = `load${Date.now().toString(36)}`;
const jsm = await jetstreamManager(nc);

/** Starts `redflow worker` and resolves once it is ready. */
const worker = (roles) => startWorker({ flowPath, roles, url, prefix, nodeArgs });

/** Messages written so far to a stream (a KV bucket is one): its last sequence. */
async function writes(stream) {
  try {
    return (await jsm.streams.info(stream)).state.last_seq;
  } catch {
    return 0;
  }
}
const counted = {
  events: Storage.traceStream(prefix),
  'tool results': `KV_${Storage.toolResultsBucket(prefix)}`,
  'run records': `KV_${Storage.runsBucket(prefix)}`,
  heartbeats: `KV_${Storage.leasesBucket(prefix)}`,
};
const processes = ['core workers', 'model/tool workers', 'nats-server', 'this client'];

/** CPU seconds used so far by a process (Linux /proc; undefined elsewhere). */
async function cpuSeconds(pid) {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
/** Write system calls made so far by a process and the bytes they wrote (its socket writes; Linux /proc; undefined elsewhere). */
async function writeCalls(pid) {
  try {
    const io = await readFile(`/proc/${pid}/io`, 'utf8');
    return { calls: Number(/syscw: (\d+)/.exec(io)?.[1]), bytes: Number(/wchar: (\d+)/.exec(io)?.[1]) };
  } catch {
    return undefined;
  }
}

/**
 * The process of the nats-server at $NATS_URL, if it is on this machine: the one holding the socket
 * that listens on its port (other people's test servers may run beside it).
 */
async function natsServerPid() {
  const port = Number(/:(\d+)$/.exec(url)?.[1] ?? 4222);
  const listening = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && Number.parseInt(fields[1]?.split(':')[1] ?? '', 16) === port) listening.add(`socket:[${fields[9]}]`);
    }
  }
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    if ((await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() !== 'nats-server') continue;
    for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
      if (listening.has(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''))) return Number(pid);
    }
  }
  return undefined;
}

/** Every run measured, by trace id, with the result its client got: replayed from the stream at the end. */
const finished = new Map();

/**
 * Every finished run's log, read back in one pass over the trace stream (one ordered consumer
 * rather than one per run): whole, in order, nothing twice, every step one the statechart can take
 * (the readers' path check), and its fold ending as its client was told.
 */
async function replayAll() {
  const logs = await readAllRuns(nc, prefix);
  for (const [traceId, result] of finished) {
    const events = logs.get(traceId) ?? [];
    const path = createRunPathCheck();
    const refused = events.map((event) => path.next(event)).find((why) => why !== undefined);
    const ids = new Set(events.map((e) => e.id));
    if (events.length !== EVENTS_PER_RUN || ids.size !== EVENTS_PER_RUN || !events.every((e, i) => e.seq === i + 1) || refused !== undefined) {
      throw new Error(`run ${traceId}: ${events.length} events, ${ids.size} distinct${refused ? `, ${refused}` : ''}`);
    }
    if (JSON.stringify(fold(events).observability.outcome) !== JSON.stringify(result.outcome)) throw new Error(`run ${traceId}: its log folds to another outcome`);
  }
  return finished.size;
}

/**
 * The floor: RUNS loops at once, each iteration two requests and four awaited appends. Its rate, and
 * the CPU per iteration it took in this process and in the nats-server: all the floor's work.
 */
async function floor() {
  const pids = { 'the floor': process.pid, 'nats-server': await natsServerPid() };
  const cpu = async () => Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([who, pid]) => [who, pid === undefined ? undefined : await cpuSeconds(pid)])));
  const js = jetstream(nc);
  const stream = `${prefix.toUpperCase()}_FLOOR`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.floor.>`], duplicate_window: 3_600_000_000_000 });
  const responder = await connectNats({ servers: url, name: 'bench-load-floor' });
  const encoder = new TextEncoder();
  const answer = encoder.encode(JSON.stringify({ ok: true, data: { text: '{"action":"tool","tool":"bump","input":{"by":1},"confidence":0.5}' } }));
  responder.subscribe(`${prefix}.floor-actor`, { callback: (_error, message) => message.respond(answer) });
  await responder.flush();
  const event = (traceId, seq) => encoder.encode(JSON.stringify({ id: `${traceId}:${seq}`, traceId, seq, type: 'tool.completed', time: new Date().toISOString(), iteration: 1, data: { tool: 'bump', ok: true } }));
  const loop = async (r) => {
    const traceId = `f${r}`;
    let seq = 0;
    const append = () => js.publish(`${prefix}.floor.${traceId}`, event(traceId, ++seq), { msgID: `${traceId}:${seq}` });
    await append();
    for (let i = 0; i < ITERATIONS_PER_RUN; i++) {
      await append();
      await nc.request(`${prefix}.floor-actor`, encoder.encode('{}'), { timeout: 60_000 });
      await append();
      if (i < ITERATIONS_PER_RUN - 1) {
        await append();
        await nc.request(`${prefix}.floor-actor`, encoder.encode('{}'), { timeout: 60_000 });
        await append();
      }
    }
    await append();
  };
  const cpuBefore = await cpu();
  const started = performance.now();
  await Promise.all(Array.from({ length: RUNS }, (_, r) => loop(r)));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpu();
  await responder.drain();
  await jsm.streams.delete(stream).catch(() => undefined);
  const iterations = RUNS * ITERATIONS_PER_RUN;
  const cpuPerIteration = Object.fromEntries(Object.keys(pids).map((who) => [who, cpuAfter[who] === undefined ? undefined : ((cpuAfter[who] - cpuBefore[who]) * 1e6) / iterations]));
  return { rate: iterations / seconds, cpuPerIteration };
}

async function redflow(runCount = RUNS, name = 'load') {
  const pids = { 'core workers': workers.slice(0, 2).map((c) => c.pid), 'model/tool workers': workers.slice(2).map((c) => c.pid), 'nats-server': [await natsServerPid()], 'this client': [process.pid] };
  const cpu = async () => Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([who, list]) => [who, (await Promise.all(list.map(cpuSeconds))).reduce((a, b) => (a === undefined || b === undefined ? undefined : a + b), 0)])));
  const coreWrites = async () => (await Promise.all(pids['core workers'].map(writeCalls))).reduce((a, b) => (a === undefined || b === undefined ? undefined : { calls: a.calls + b.calls, bytes: a.bytes + b.bytes }), { calls: 0, bytes: 0 });
  const cpuBefore = await cpu();
  const coreWritesBefore = await coreWrites();
  const before = Object.fromEntries(await Promise.all(Object.entries(counted).map(async ([kind, stream]) => [kind, await writes(stream)])));
  const started = performance.now();
  const follow = SHARED_FOLLOW ? createSharedRunFollow({ nc, prefix }) : undefined;
  const runs = await Promise.all(
    Array.from({ length: runCount }, (_, i) => startRemoteRun({ nc, prefix, input: `run ${i}`, traceId: `${name}-${i}`, startTimeoutMs: 120_000, ...(follow && { follow }) })),
  );
  const ends = [];
  const results = await Promise.all(runs.map((run) => run.result.then((result) => (ends.push(performance.now() - started), result))));
  const seconds = (performance.now() - started) / 1000;
  await follow?.close();
  ends.sort((a, b) => a - b);
  const at = (q) => (ends[Math.min(ends.length - 1, Math.floor(q * ends.length))] / 1000).toFixed(1);
  const cpuAfter = await cpu();
  const coreWritesAfter = await coreWrites();
  const after = Object.fromEntries(await Promise.all(Object.entries(counted).map(async ([kind, stream]) => [kind, await writes(stream)])));
  if (!results.every((result) => result.outcome.reason === 'final_answer')) throw new Error('a run did not end with its final answer');
  for (const run of runs) finished.set(run.traceId, results[runs.indexOf(run)]);
  const iterations = runCount * ITERATIONS_PER_RUN;
  const perIteration = Object.fromEntries(Object.keys(counted).map((kind) => [kind, (after[kind] - before[kind]) / iterations]));
  const cpuUsed = Object.fromEntries(Object.keys(pids).filter((who) => cpuAfter[who] !== undefined).map((who) => [who, cpuAfter[who] - cpuBefore[who]]));
  const coreWritesPerIteration =
    coreWritesBefore === undefined || coreWritesAfter === undefined
      ? undefined
      : { calls: (coreWritesAfter.calls - coreWritesBefore.calls) / iterations, bytes: (coreWritesAfter.bytes - coreWritesBefore.bytes) / iterations };
  return { rate: iterations / seconds, seconds, perIteration, cpuUsed, coreWritesPerIteration, ends: `half the runs done after ${at(0.5)} s, 90% after ${at(0.9)} s, 99% after ${at(0.99)} s` };
}

/**
 * What a run waiting on its tool costs the core worker that holds it: IDLE_RUNS runs started on a
 * prefix of their own, in one core worker with the heap probe, against a tool that answers only
 * long after; the worker's memory after a full collection, before the runs and once every one has
 * sent its tool request, divided by the runs. Bytes per run.
 */
async function idleRunMemory() {
  const idlePrefix = `${prefix}idle`;
  const core = await startWorker({ flowPath: path.join(ROOT, 'bench/fixtures/lookup-flow.json'), roles: 'core', url, prefix: idlePrefix, nodeArgs: heapProbeArgs });
  const actors = await startWorker({ flowPath: path.join(ROOT, 'bench/fixtures/lookup-flow.json'), roles: 'model,tool', url, prefix: idlePrefix, env: { BENCH_LOOKUP_DELAY_MS: '600000' } });
  const follow = createSharedRunFollow({ nc, prefix: idlePrefix });
  try {
    const before = await heapInUse(core);
    let waiting = 0;
    let allWaiting;
    const everyOneWaits = new Promise((resolve) => (allWaiting = resolve));
    const onEvent = (event) => {
      if (event.type === 'tool.requested' && ++waiting === IDLE_RUNS) allWaiting();
    };
    const runs = await Promise.all(
      Array.from({ length: IDLE_RUNS }, (_, i) => startRemoteRun({ nc, prefix: idlePrefix, input: `idle ${i}`, traceId: `idle-${i}`, startTimeoutMs: 120_000, follow, onEvent })),
    );
    for (const run of runs) run.result.catch(() => undefined);
    await everyOneWaits;
    const during = await heapInUse(core);
    return (during - before) / IDLE_RUNS;
  } finally {
    await follow.close().catch(() => undefined);
    await removeCluster(nc, idlePrefix, [core, actors]);
  }
}

let workers = [];
workers = await Promise.all([worker('core'), worker('core'), worker('model,tool'), worker('model,tool')]);
try {
  const load = os.loadavg()[0];
  // The workers warm up first (their code compiled, their connections busy), as in a running cluster.
  await redflow(Math.min(200, RUNS), 'warmup');
  const floorRounds = [await floor()];
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push(await redflow(RUNS, `load${round}`));
    floorRounds.push(await floor());
  }
  const floors = floorRounds.map((f) => f.rate);
  const replayed = await replayAll();
  const idleRunBytes = IDLE_RUNS > 0 ? await idleRunMemory() : undefined;
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const range = (values, digits = 0) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
  const rates = rounds.map((r) => r.rate);
  const ratios = rounds.map((r, i) => r.rate / ((floors[i] + floors[i + 1]) / 2));
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  const cpuPerIteration = rounds.map((r) => (Object.keys(r.cpuUsed).length === processes.length ? (sum(Object.values(r.cpuUsed)) * 1e6) / (RUNS * ITERATIONS_PER_RUN) : undefined));
  const ours = rounds[rates.indexOf(median(rates))];
  const writesPerIteration = sum(Object.values(ours.perIteration));
  console.log(
    `Distributed load: ${RUNS} concurrent runs of ${ITERATIONS_PER_RUN} iterations, 2 core + 2 model/tool worker processes, one nats-server, ` +
      `${SHARED_FOLLOW ? 'runs followed through one shared consumer' : 'a consumer per followed run'}, ${TOOL_WITH_EFFECTS ? 'a tool with effects (results kept)' : 'an idempotent lookup tool'}; ` +
      `${ROUNDS} rounds (load average ${load.toFixed(1)} on ${os.cpus().length} cores at the start, ${os.loadavg()[0].toFixed(1)} at the end)`,
  );
  console.log(`  hand-written floor, same requests, 4 awaited appends per iteration : median ${median(floors).toFixed(0)} iterations/s (${range(floors)})`);
  const floorCpu = floorRounds.map((f) => Object.values(f.cpuPerIteration)).filter((values) => values.every((v) => v !== undefined)).map(sum);
  if (floorCpu.length === floorRounds.length) {
    const middle = floorRounds[floorCpu.indexOf(median(floorCpu))];
    // All the floor's work, to set beside the CPU of each of redflow's processes below.
    console.log(
      `  the floor's CPU per iteration: median ${median(floorCpu).toFixed(0)} µs (${range(floorCpu)}); the median round's: ` +
        `${Object.entries(middle.cpuPerIteration).map(([who, us]) => `${who} ${us.toFixed(0)}`).join(', ')} µs`,
    );
  }
  console.log(
    `  redflow                                      : median ${median(rates).toFixed(0)} iterations/s (${range(rates)}); ` +
      `${median(ratios).toFixed(2)}× the floor beside it (${range(ratios, 2)}); ${replayed} logs replayed whole`,
  );
  console.log(`  median round: ${ours.ends}`);
  console.log(
    `  JetStream writes per iteration: ${writesPerIteration.toFixed(2)} (` +
      Object.entries(ours.perIteration).map(([kind, n]) => `${kind} ${n.toFixed(2)}`).join(', ') +
      ')',
  );
  if (idleRunBytes !== undefined) {
    console.log(`  memory per idle run (waiting on its tool) in its core worker: ${(idleRunBytes / 1024).toFixed(1)} KiB (${IDLE_RUNS.toLocaleString('en')} runs held, heap after a full collection)`);
  }
  let projected = '';
  if (cpuPerIteration.every((cpu) => cpu !== undefined)) {
    console.log(
      `  CPU per iteration: median ${median(cpuPerIteration).toFixed(0)} µs (${range(cpuPerIteration)}); the median round's by process: ` +
        `${Object.entries(ours.cpuUsed).map(([who, seconds]) => `${who} ${((seconds * 1e6) / (RUNS * ITERATIONS_PER_RUN)).toFixed(0)}`).join(', ')} µs`,
    );
    if (rounds.every((r) => r.coreWritesPerIteration !== undefined)) {
      const calls = rounds.map((r) => r.coreWritesPerIteration.calls);
      const bytes = rounds.map((r) => r.coreWritesPerIteration.bytes);
      console.log(`  core workers' writes per iteration: median ${median(calls).toFixed(2)} system calls (${range(calls, 2)}), ${median(bytes).toFixed(0)} bytes (${range(bytes)})`);
    }
    // What this machine would do with nothing else running: its cores divided by the CPU an iteration took.
    projected = `; the CPU it took would allow ${((os.cpus().length * 1e6) / median(cpuPerIteration)).toFixed(0)} on ${os.cpus().length} idle cores`;
  }
  console.log(
    `target: ${RUNS.toLocaleString('en')} concurrent runs on one 2-core machine ≥ ${TARGET.toLocaleString('en')} iterations/s: median ${median(rates).toFixed(0)} iterations/s ` +
      `(${(median(rates) / TARGET).toFixed(2)}× the target; ${median(ratios).toFixed(2)}× the hand-written floor of the same run; load average ${load.toFixed(1)}${projected})`,
  );
} finally {
  await removeCluster(nc, prefix, workers);
  await nc.drain();
}
