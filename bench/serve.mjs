#!/usr/bin/env node
// Part of `npm run bench`: what `redflow serve` adds on top of the embedded runtime, each figure
// against a baseline measured in the same run.
//   1. Sequential runs of a small flow (scripted model, a tool.module no-op tool, 3 iterations)
//      started with POST /api/runs and awaited to the `end` event of their SSE stream, against
//      the same runs with runFlowFile + finished(), in alternating rounds.
//   2. Live delivery latency of those API runs' events to their SSE client, against the
//      in-process onEvent callback of the direct runs.
//   3. One run followed by 1, 10 and 100 SSE clients at once: time to the `end` event at all of
//      them, against 1 client.
// The server runs in this thread, as `redflow serve` does in its process; the HTTP clients run in
// a worker thread (their own event loop, as a browser or another process would be), over one
// keep-alive http.Agent. Both sides use the default JSONL fsync ('always', as `redflow serve`).
// Wall-clock numbers on shared VMs vary ±20% between runs (the 2-core VM here: more); read the
// ratios and differences, each taken against its baseline in the same run.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const RUNS = Number(process.env.BENCH_SERVE_RUNS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const FANOUT_ROUNDS = Number(process.env.BENCH_SERVE_FANOUT_ROUNDS ?? 15);
const FOLLOWERS = [1, 10, 100];
const FLOW_ID = 'bench';
const INPUT = 'bench';

/**
 * Milliseconds on the system-wide monotonic clock (CLOCK_MONOTONIC through uv_hrtime): unlike
 * performance.now(), whose origin is per thread, it compares across threads and processes.
 */
const hrMs = () => Number(process.hrtime.bigint()) / 1e6;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

if (isMainThread) await main();
else await client(workerData);

// ---------------------------------------------------------------------------------------------
// The server side (this thread): `redflow serve`'s server and the direct runs.
// ---------------------------------------------------------------------------------------------

async function main() {
  const { runFlowFile } = await import('../dist/host/embeddedFlowRun.js');
  const { createRedflowServer } = await import('../dist/server/server.js');
  const { createEmbeddedRunBackend } = await import('../dist/server/embeddedRunBackend.js');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-bench-serve-'));
  const flowsDir = path.join(dir, 'flows');
  const flowPath = path.join(flowsDir, `${FLOW_ID}.json`);
  await writeBenchFlow(flowsDir, flowPath);

  // The server's own backend, as createRedflowServer makes it by default, with one thin wrapper on
  // follow() (the only way the SSE route receives events) that stamps each event as it is handed
  // over: once its record is written to the run's log file (see measureDelivery).
  const errors = [];
  const embedded = createEmbeddedRunBackend({
    flowsDir,
    runsDir: path.join(dir, 'runs-api'),
    onRunError: (traceId, error) => errors.push(`run ${traceId}: ${error?.stack ?? error}`),
  });
  const handedOver = new Map(); // event id → { at, live }
  let stamping = false;
  // And on get(): the SSE route asks it for the run just before writing a stream's `end` event,
  // so its last answer after part 3's release is when the server wrote the last `end`.
  let lastGet = 0;
  const backend = {
    ...embedded,
    async get(traceId) {
      const run = await embedded.get(traceId);
      lastGet = hrMs();
      return run;
    },
    async *follow(traceId, afterSeq, options) {
      // Live: recorded after the stream began following (its `time`, 1 ms resolution, is past the
      // start's millisecond); the events a new stream catches up on were in the log before.
      const since = Date.now();
      for await (const event of embedded.follow(traceId, afterSeq, options)) {
        if (stamping) handedOver.set(event.id, { at: hrMs(), live: Date.parse(event.time) > since });
        yield event;
      }
    },
  };
  const server = await createRedflowServer({ flowsDir, backend, port: 0, logError: (line) => errors.push(line) });

  const worker = new Worker(new URL(import.meta.url), { workerData: { port: server.port, flow: FLOW_ID, input: INPUT } });
  const inbox = [];
  const waiting = [];
  worker.on('message', (message) => (waiting.length > 0 ? waiting.shift()(message) : inbox.push(message)));
  const workerFailed = new Promise((_, reject) => worker.once('error', reject));
  const nextMessage = () => Promise.race([workerFailed, new Promise((resolve) => (inbox.length > 0 ? resolve(inbox.shift()) : waiting.push(resolve)))]);
  const ask = (message) => {
    worker.postMessage(message);
    return nextMessage();
  };

  let directCount = 0;
  const directDir = path.join(dir, 'runs-direct');
  await mkdir(directDir, { recursive: true });
  /** One direct run: runFlowFile + finished(), with an onEvent callback stamping each event. */
  const directRun = async (stamps) => {
    const run = await runFlowFile({
      flowPath,
      input: INPUT,
      logPath: path.join(directDir, `direct-${++directCount}.jsonl`),
      onEvent: stamps ? (event) => stamps.push([event.seq, event.time, hrMs()]) : () => undefined,
    });
    const result = await run.finished();
    if (result.outcome.reason !== 'final_answer') throw new Error(`unexpected outcome ${JSON.stringify(result.outcome)}`);
  };

  try {
    // Warm up both paths (and the fan-out) before measuring anything.
    for (let i = 0; i < 40; i++) await directRun();
    await ask({ op: 'runs', n: 40 });
    for (const k of FOLLOWERS) await fanout(k);

    // 1 and 2. Sequential runs, alternating rounds, the same number of runs on each side.
    const perRound = Math.max(1, Math.round(RUNS / ROUNDS));
    const direct = [];
    const api = [];
    const directStamps = [];
    const receipts = [];
    for (let round = 0; round < ROUNDS; round++) {
      global.gc?.();
      const start = hrMs();
      for (let i = 0; i < perRound; i++) await directRun(directStamps);
      direct.push((hrMs() - start) / perRound);
      global.gc?.();
      stamping = true;
      const answer = await ask({ op: 'runs', n: perRound });
      stamping = false;
      api.push(answer.elapsedMs / perRound);
      receipts.push(...answer.receipts);
    }
    const d = median(direct);
    const a = median(api);
    console.log(`Serve: ${perRound * ROUNDS} sequential runs a side (3 iterations, scripted model, tool.module no-op, JSONL fsync 'always'), median of ${ROUNDS} alternating rounds`);
    console.log(`  runFlowFile + finished()                         : ${d.toFixed(2)} ms/run`);
    console.log(`  POST /api/runs + SSE stream to its \`end\` event   : ${a.toFixed(2)} ms/run (${(a / d).toFixed(2)}× direct; +${(a - d).toFixed(2)} ms per run)`);

    measureDelivery(directStamps, receipts, handedOver);

    // 3. Concurrent followers of one run.
    const fan = new Map(FOLLOWERS.map((k) => [k, { end: [], server: [], catchUp: [] }]));
    for (let round = 0; round < FANOUT_ROUNDS; round++) {
      for (const k of FOLLOWERS) {
        const { endMs, serverMs, catchUpMs } = await fanout(k);
        fan.get(k).end.push(endMs);
        fan.get(k).server.push(serverMs);
        fan.get(k).catchUp.push(catchUpMs);
      }
    }
    const base = median(fan.get(1).end);
    console.log(`Serve: one run followed by K SSE clients at once, median of ${FANOUT_ROUNDS} rounds (the run is held at its first tool call until all K have caught up, then released)`);
    console.log('  K clients | release → `end` at the last client | release → server wrote the last `end` | all K connected and caught up');
    for (const k of FOLLOWERS) {
      const end = median(fan.get(k).end);
      const ratio = k === 1 ? '(baseline)' : `(${(end / base).toFixed(2)}× 1 client)`;
      console.log(
        `  ${String(k).padStart(9)} | ${end.toFixed(2).padStart(6)} ms ${ratio.padEnd(18)}         | ${median(fan.get(k).server).toFixed(2).padStart(6)} ms` +
          `                            | ${median(fan.get(k).catchUp).toFixed(2).padStart(6)} ms`,
      );
    }
  } finally {
    globalThis.__redflowBenchGate = undefined;
    await worker.terminate();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  if (errors.length > 0) throw new Error(`the server reported errors:\n${errors.join('\n')}`);

  /**
   * One run, followed by k clients: its first tool call waits on a gate until every client has
   * received the run's events up to that call's tool.requested; then the gate opens and the rest
   * of the run (8 more events: the two tool results, two model turns, the final answer, the
   * terminal event) reaches all k clients. Measured from the release to the `end` event at the
   * last client, on the shared monotonic clock.
   */
  async function fanout(k) {
    let open;
    const gate = new Promise((resolve) => (open = resolve));
    globalThis.__redflowBenchGate = gate;
    worker.postMessage({ op: 'fanout', k });
    const ready = await nextMessage();
    if (ready.type !== 'ready') throw new Error(`unexpected message ${JSON.stringify(ready)}`);
    const released = hrMs();
    open();
    const done = await nextMessage();
    globalThis.__redflowBenchGate = undefined;
    return { endMs: Math.max(...done.ends) - released, serverMs: lastGet - released, catchUpMs: ready.catchUpMs };
  }
}

/**
 * Part 2. An event is available to an in-process callback once the runtime has appended it to
 * the log and calls the run's onEvent hook (after fsync). The embedded backend's follow reads the
 * run's log file, woken by the store as each record is written (before its fsync). So:
 *   - "follow → SSE client" is exact: the follow() wrapper's stamp (the backend handing the event
 *     over) against the worker's receive stamp (when the chunk holding the event arrives, before
 *     parsing), both on the system-wide monotonic clock: what the SSE route and HTTP add.
 *   - For a baseline that is not 0 by definition, both observers are also measured from the
 *     event's creation: its `time` field, stamped by the recorder before the append. That adds the
 *     append (fdatasync) and queueing behind earlier events, and `time` has 1 ms resolution
 *     (floored), so those figures carry up to 1 ms of rounding (0.5 ms on average), the same for
 *     both: it cancels out of their differences, not of their ratios. Monotonic stamps are turned
 *     into wall time with an offset taken when Date.now() ticks.
 * Only live events of the API runs count (not the ones a new stream catches up on, which were
 * appended before the client asked); run.started is left out of the baseline for the same reason.
 */
function measureDelivery(directStamps, receipts, handedOver) {
  // Date.now() - hrMs() at the instants Date.now() ticks, for 30 ms: a sample read late (the
  // thread preempted between the two reads, common on this VM) is too small, so the largest is best.
  const wallOffset = (() => {
    let best = -Infinity;
    let before = Date.now();
    const until = hrMs() + 30;
    while (hrMs() < until) {
      const now = Date.now();
      if (now !== before) best = Math.max(best, now - hrMs());
      before = now;
    }
    return best;
  })();
  const fromAppend = [];
  const apiFromTime = [];
  const apiOnEventFromTime = [];
  let total = 0;
  for (const [id, time, at] of receipts) {
    total += 1;
    const handed = handedOver.get(id);
    if (!handed?.live) continue;
    fromAppend.push(at - handed.at);
    apiFromTime.push(at + wallOffset - Date.parse(time));
    apiOnEventFromTime.push(handed.at + wallOffset - Date.parse(time));
  }
  const directFromTime = directStamps.filter(([seq]) => seq > 1).map(([, time, at]) => at + wallOffset - Date.parse(time));
  const show = (values) => `p50 ${percentile(values, 50).toFixed(3)} ms, p99 ${percentile(values, 99).toFixed(3)} ms`;
  const over = (p) => {
    const ours = percentile(apiFromTime, p);
    const theirs = percentile(directFromTime, p);
    return `p${p} ${ours >= theirs ? '+' : ''}${(ours - theirs).toFixed(3)} ms, ${(ours / theirs).toFixed(2)}×`;
  };
  console.log(`Serve: live delivery of the API runs' events to their SSE client (${fromAppend.length} of ${total} events were live; the client is in a worker thread)`);
  console.log(`  from the backend's follow handing it over (read from the log file)  : ${show(fromAppend)}`);
  console.log(`  from the event's \`time\` (set when recorded, before the append + fsync; 1 ms resolution, floored):`);
  console.log(`    in-process onEvent, runFlowFile (baseline)     : ${show(directFromTime)}`);
  console.log(`    the backend's follow, the same runs under serve: ${show(apiOnEventFromTime)}`);
  console.log(`    SSE client                                     : ${show(apiFromTime)} (${over(50)}; ${over(99)} the baseline)`);
}

/** The flows directory: one flow with a scripted model, a tool.module no-op tool, 3 iterations. */
async function writeBenchFlow(flowsDir, flowPath) {
  await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
  // The tool answers at once, unless a bench part has set a gate: then it waits for it (part 3
  // holds the run there until its followers have caught up). It runs in the server's thread.
  await writeFile(
    path.join(flowsDir, 'tools', 'noop.mjs'),
    `export default {
  name: 'noop',
  description: 'does nothing',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  execute: () => (globalThis.__redflowBenchGate ? globalThis.__redflowBenchGate.then(() => null) : null),
};
`,
  );
  const tool = (n) => ({ action: 'tool', tool: 'noop', input: { n }, confidence: 0.5 });
  const flow = {
    id: FLOW_ID,
    version: 1,
    name: 'serve bench',
    start: 'input',
    nodes: [
      { id: 'input', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3, allowedTools: ['noop'] } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [tool(1), tool(2), { action: 'final', message: 'done', confidence: 1 }] } },
      { id: 'noop', type: 'tool.module', config: { module: 'tools/noop.mjs' } },
      { id: 'reply', type: 'response.chat', config: { format: 'text' } },
    ],
    edges: [
      { id: 'e1', source: 'input', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'noop' },
      { id: 'e4', source: 'agent', target: 'reply' },
    ],
  };
  await writeFile(flowPath, JSON.stringify(flow, null, 2));
}

// ---------------------------------------------------------------------------------------------
// The client side (a worker thread): POST /api/runs and SSE streams over one keep-alive agent.
// ---------------------------------------------------------------------------------------------

async function client({ port, flow, input }) {
  const agent = new http.Agent({ keepAlive: true });
  const base = { host: '127.0.0.1', port, agent };

  const startRun = () =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ flow, input });
      const req = http.request({ ...base, method: 'POST', path: '/api/runs', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text).traceId) : reject(new Error(`POST /api/runs: ${res.statusCode} ${text}`))));
      });
      req.on('error', reject);
      req.end(body);
    });

  /**
   * Follows a run's SSE stream to its `end` event. `onEvent(event, at)` gets each agent event with
   * the time its chunk arrived; resolves with the time the `end` event arrived, once the answer is
   * over (so the connection goes back to the agent's pool).
   */
  const follow = (traceId, onEvent) =>
    new Promise((resolve, reject) => {
      const req = http.get({ ...base, path: `/api/runs/${encodeURIComponent(traceId)}/stream`, headers: { Accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffer = '';
        let endAt;
        res.on('data', (chunk) => {
          const at = hrMs();
          buffer += chunk;
          let split;
          while ((split = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, split);
            buffer = buffer.slice(split + 2);
            let name = 'message';
            let data;
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) name = line.slice(7);
              else if (line.startsWith('data: ')) data = line.slice(6);
            }
            if (data === undefined) continue;
            if (name === 'agent-event') onEvent(JSON.parse(data), at);
            else if (name === 'end') {
              const run = JSON.parse(data);
              if (run.outcome?.reason !== 'final_answer') return reject(new Error(`unexpected end ${data.slice(0, 300)}`));
              endAt = at;
            }
          }
        });
        res.on('end', () => (endAt === undefined ? reject(new Error(`stream of ${traceId} closed without \`end\``)) : resolve(endAt)));
      });
      req.on('error', reject);
    });

  parentPort.on('message', async (message) => {
    if (message.op === 'runs') {
      // Sequential runs; receipts are [event id, event time, receive time] for part 2.
      const receipts = [];
      const start = hrMs();
      for (let i = 0; i < message.n; i++) {
        const traceId = await startRun();
        await follow(traceId, (event, at) => receipts.push([event.id, event.time, at]));
      }
      parentPort.postMessage({ elapsedMs: hrMs() - start, receipts });
    } else if (message.op === 'fanout') {
      const traceId = await startRun();
      const asked = hrMs();
      let pending = message.k;
      let allCaughtUp;
      const caughtUp = new Promise((resolve) => (allCaughtUp = resolve));
      const ends = Promise.all(
        Array.from({ length: message.k }, () => {
          let seen = false;
          return follow(traceId, (event) => {
            // The run is held in its first tool call, right after this event.
            if (!seen && event.type === 'tool.requested') {
              seen = true;
              if (--pending === 0) allCaughtUp();
            }
          });
        }),
      );
      await caughtUp;
      parentPort.postMessage({ type: 'ready', catchUpMs: hrMs() - asked });
      parentPort.postMessage({ type: 'done', ends: await ends });
    }
  });
}
