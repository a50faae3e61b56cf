#!/usr/bin/env node
// Part of `npm run bench`: the distributed mode while a core worker dies. Two core worker
// processes and two model+tool worker processes serve a steady load (BENCH_TAKEOVER_CONCURRENCY
// runs in flight, a new one started as each ends); one core worker is SIGKILLed halfway. Prints
// iterations per second before the kill, from the kill until every run it held is going again
// (its lease runs out, the other worker takes the runs over and resumes them from their logs), and
// after, each as a ratio of the rate before; the longest any run stood still; and checks that every
// run ended with its final answer and every log replays whole, nothing lost or written twice.
// Needs nats-server -js at $NATS_URL (default 127.0.0.1:4222); skipped with a note when absent.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectNats } from '../dist/nats/connect.js';
import { startRemoteRun } from '../dist/nats/cluster/remoteRun.js';
import { readAllRuns as readRuns, removeCluster, startWorker } from './clusterBench.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = Number(process.env.BENCH_TAKEOVER_CONCURRENCY ?? 200);
const PHASE_MS = Number(process.env.BENCH_TAKEOVER_PHASE_MS ?? 5000);
const LEASE_MS = 1500;
const EVENTS_PER_RUN = 16;
const url = process.env.NATS_URL ?? '127.0.0.1:4222';
const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');

/** Progress on standard error with BENCH_DEBUG=1. */
const debug = (line) => process.env.BENCH_DEBUG && process.stderr.write(`${new Date().toISOString()} ${line}\n`);

let nc;
try {
  nc = await connectNats({ servers: url, name: 'bench-takeover', timeoutMs: 2000 });
} catch (error) {
  console.log(`Distributed takeover: skipped (no nats-server with JetStream at ${url}: ${error.message})`);
  process.exit(0);
}
const prefix = `takeover${Date.now().toString(36)}`;

/** Starts `redflow worker` with the bench's lease and resolves once it is ready. */
const worker = (roles) =>
  startWorker({ flowPath, roles, url, prefix, args: ['--lease', String(LEASE_MS)], onReady: (child) => debug(`worker ${roles} ready (pid ${child.pid})`) });

/** Every run's events as the trace stream holds them. */
const readAllRuns = () => readRuns(nc, prefix);

/** Kills what is left of the worker processes and removes the prefix's stream and buckets. */
async function cleanUp(children) {
  await removeCluster(nc, prefix, children);
  await nc.drain();
}

const children = [];
// Interrupted or stuck: the workers and the prefix go all the same.
const bail = (why) => {
  console.log(`Distributed takeover: ${why}`);
  void cleanUp(children).finally(() => process.exit(1));
};
process.once('SIGINT', () => bail('interrupted'));
process.once('SIGTERM', () => bail('terminated'));
setTimeout(() => bail('gave up after 5 minutes'), 300_000).unref();
try {
  // The first core worker makes the leases bucket, so the lease is LEASE_MS for both.
  children.push(await worker('core'));
  children.push(await worker('core'));
  children.push(...(await Promise.all([worker('model,tool'), worker('model,tool')])));
  await measure(children[0]);
} finally {
  await cleanUp(children);
}

async function measure(doomed) {
  /** When each iteration started (its model.requested), and each run's last event. */
  const iterationsAt = [];
  const lastEventAt = new Map();
  const everMoved = new Set();
  let longestStall = 0;
  const runs = [];
  const lost = [];
  const startsLost = [];
  const failed = [];
  let stopping = false;
  let counter = 0;

  const keepOneRunning = async () => {
    while (!stopping) {
      const traceId = `t-${++counter}`;
      let run;
      try {
        run = await startRemoteRun({
          nc,
          prefix,
          input: traceId,
          traceId,
          startTimeoutMs: 20_000,
          onEvent: (event) => {
            const now = performance.now();
            if (everMoved.has(traceId)) longestStall = Math.max(longestStall, now - (lastEventAt.get(traceId) ?? now));
            everMoved.add(traceId);
            lastEventAt.set(traceId, now);
            if (event.type === 'model.requested') iterationsAt.push(now);
          },
        });
      } catch (error) {
        // A start the killed worker took and never answered: the client starts another.
        startsLost.push(`${traceId} (${error.code ?? error.message})`);
        continue;
      }
      const ended = await Promise.race([run.result, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
      lastEventAt.delete(traceId);
      if (ended === undefined) {
        // Never reported: listed below, and left out of the replay check.
        lost.push(`${traceId}${everMoved.has(traceId) ? '' : ' (no event ever)'}`);
        run.detach();
        continue;
      }
      if (ended.outcome.reason === 'final_answer') runs.push(run);
      else failed.push(`${traceId} (${ended.outcome.reason}${ended.outcome.error ? `: ${ended.outcome.error.code} ${ended.outcome.error.message}` : ''})`);
    }
  };

  const rate = (from, to) => iterationsAt.filter((at) => at >= from && at < to).length / ((to - from) / 1000);
  const load = os.loadavg()[0];
  const started = performance.now();
  const loops = Array.from({ length: CONCURRENCY }, () => keepOneRunning());
  debug(`${CONCURRENCY} runs in flight`);
  await new Promise((resolve) => setTimeout(resolve, 2 * PHASE_MS));
  const killedAt = performance.now();
  doomed.kill('SIGKILL');
  debug(`killed; ${lastEventAt.size} runs in flight`);
  // Every run the dead worker held is going again once each run that had moved before the kill
  // has moved since: its lease ran out, the other worker took it over and resumed it.
  let recoveredAt;
  while (recoveredAt === undefined) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stalled = [...lastEventAt].filter(([traceId, at]) => at < killedAt && everMoved.has(traceId));
    if (stalled.length === 0) recoveredAt = performance.now();
    else if (performance.now() - killedAt > 30_000) {
      stopping = true;
      await Promise.all(loops);
      debug('giving up on the stalled runs');
      throw new Error(`${stalled.length} runs never went on after the kill: ${stalled.map(([traceId]) => traceId).join(', ')}`);
    }
  }
  debug(`every run going again after ${((recoveredAt - killedAt) / 1000).toFixed(1)} s`);
  await new Promise((resolve) => setTimeout(resolve, PHASE_MS));
  stopping = true;
  const endedAt = performance.now();
  await Promise.all(loops);
  debug(`load stopped; checking ${runs.length} logs`);

  const before = rate(started + PHASE_MS, killedAt);
  const during = rate(killedAt, recoveredAt);
  const after = rate(recoveredAt, endedAt);
  // Every log read back from the stream in one pass: whole, in order, nothing twice.
  const logs = await readAllRuns();
  let resumed = 0;
  for (const run of runs) {
    const events = logs.get(run.traceId) ?? [];
    const expected = EVENTS_PER_RUN + events.filter((e) => e.type === 'run.resumed').length;
    if (!events.every((e, i) => e.seq === i + 1) || events.at(-1)?.type !== 'run.completed') {
      throw new Error(`run ${run.traceId}: ${events.map((e) => `${e.seq} ${e.type}`).join(', ')}`);
    }
    // A run taken over asks again what was asked and not answered: at most one repeated model request.
    if (events.length < expected || events.length > expected + 1) throw new Error(`run ${run.traceId}: ${events.length} events`);
    if (expected > EVENTS_PER_RUN) resumed += 1;
  }
  console.log(
    `Distributed takeover: ${CONCURRENCY} runs in flight, 2 core + 2 model/tool worker processes, one core worker SIGKILLed (lease ${LEASE_MS} ms; load average ${load.toFixed(1)} on ${os.cpus().length} cores)`,
  );
  console.log(`  before the kill                    : ${before.toFixed(0)} iterations/s`);
  console.log(`  from the kill to every run going   : ${during.toFixed(0)} iterations/s for ${((recoveredAt - killedAt) / 1000).toFixed(1)} s (${(during / before).toFixed(2)}× before)`);
  console.log(`  after, one core worker             : ${after.toFixed(0)} iterations/s (${(after / before).toFixed(2)}× before)`);
  console.log(`  ${runs.length} runs, ${resumed} taken over and resumed from their logs; longest a run stood still: ${(longestStall / 1000).toFixed(1)} s; every log replayed whole`);
  console.log(
    `target: throughput before, during and after a core worker's takeover: ${before.toFixed(0)}, ${during.toFixed(0)} and ${after.toFixed(0)} iterations/s ` +
      `(during ${(during / before).toFixed(2)}× and after ${(after / before).toFixed(2)}× the rate before the kill; every run going again ${((recoveredAt - killedAt) / 1000).toFixed(1)} s after it)`,
  );
  if (startsLost.length > 0) console.log(`  starts the killed worker never answered (the client started other runs): ${startsLost.length}`);
  if (lost.length > 0) console.log(`  PROBLEM: runs that never ended within 30 s: ${lost.join(', ')}`);
  if (failed.length > 0) console.log(`  PROBLEM: runs that did not end with their final answer: ${failed.join(', ')}`);
}
