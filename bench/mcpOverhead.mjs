#!/usr/bin/env node
// Part of `npm run bench`: what a tool.mcp costs against a tool.module doing the same work.
// The work is server-everything's `echo` (@modelcontextprotocol/server-everything, over stdio, as
// a flow's tool.mcp starts it), and the baseline a tool.module answering the same text
// (bench/fixtures/mcp/echo.mjs). Both are measured in this run, in alternating rounds:
//   per call  – one tool call through the built tool (`execute`), the MCP one over a connection
//               already open: the protocol's round trip (JSON-RPC over the child's stdin/stdout);
//   per run   – a whole embedded run (redflow run) of a flow whose scripted model calls echo
//               CALLS times: the MCP one starts its server for the run and stops it after.
// Prints, for each, the median and range over the rounds, and the ratio MCP / module per round.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadMcpTools } from '../dist/actors/tools/mcpTools.js';
import { loadModuleTool } from '../dist/actors/tools/moduleTool.js';
import { runFlowFile } from '../dist/host/embeddedFlowRun.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 5);
const CALLS_PER_ROUND = Number(process.env.BENCH_MCP_CALLS ?? 300);
const RUNS_PER_ROUND = Number(process.env.BENCH_MCP_RUNS ?? 3);
const CALLS = 5;
const everything = { command: process.execPath, args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
const echoModule = path.join(ROOT, 'bench/fixtures/mcp/echo.mjs');

const sorted = (values) => [...values].sort((a, b) => a - b);
const median = (values) => sorted(values)[Math.floor(values.length / 2)];
const summary = (values, digits, unit) => {
  const all = sorted(values);
  return `${median(all).toFixed(digits)} ${unit} (range ${all[0].toFixed(digits)}–${all.at(-1).toFixed(digits)})`;
};
const contextOf = (i) => ({ signal: new AbortController().signal, idempotencyKey: `bench:${i}`, traceId: 'bench', iteration: i + 1 });

/** µs per call of `tool`, over CALLS_PER_ROUND calls in a row. */
async function perCall(tool) {
  const start = performance.now();
  for (let i = 0; i < CALLS_PER_ROUND; i++) {
    const output = await tool.execute({ message: `hello ${i}` }, contextOf(i));
    if (output !== `Echo: hello ${i}`) throw new Error(`${tool.name} answered ${JSON.stringify(output)}`);
  }
  return ((performance.now() - start) / CALLS_PER_ROUND) * 1000;
}

const dir = await mkdtemp(path.join(tmpdir(), 'redflow-bench-mcp-'));
try {
  const module = await loadModuleTool({ module: echoModule, name: 'echo' }, dir, [path.dirname(echoModule)]);
  const server = await loadMcpTools('everything', { ...everything, include: ['echo'] }, { baseDir: dir });
  const [mcp] = server.tools;
  // Warm both paths (JIT, the server's first answers) before measuring.
  await perCall(module);
  await perCall(mcp);
  const calls = { module: [], mcp: [], ratio: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const m = await perCall(module);
    const p = await perCall(mcp);
    calls.module.push(m);
    calls.mcp.push(p);
    calls.ratio.push(p / m);
  }
  await server.close();

  // Whole runs: the same flow with either tool node.
  const answers = [...Array.from({ length: CALLS }, (_, i) => ({ action: 'tool', tool: 'echo', input: { message: `hello ${i}` }, confidence: 0.5 })), { action: 'final', message: 'done', confidence: 0.9 }];
  const flowWith = async (name, toolNode) => {
    const file = path.join(dir, `${name}.json`);
    await writeFile(
      file,
      JSON.stringify({
        id: name,
        nodes: [
          { id: 'in', type: 'trigger.input' },
          { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: CALLS + 2 } },
          { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers } },
          toolNode,
        ],
        edges: [
          { id: 'e1', source: 'in', target: 'agent' },
          { id: 'e2', source: 'agent', target: 'model' },
          { id: 'e3', source: 'agent', target: toolNode.id },
        ],
      }),
    );
    return file;
  };
  const flows = {
    module: await flowWith('module', { id: 'echo', type: 'tool.module', config: { module: echoModule } }),
    mcp: await flowWith('mcp', { id: 'everything', type: 'tool.mcp', config: { ...everything, include: ['echo'] } }),
  };
  let runs = 0;
  /** ms per run of `flowPath`, over RUNS_PER_ROUND runs in a row. */
  const perRun = async (flowPath) => {
    const start = performance.now();
    for (let i = 0; i < RUNS_PER_ROUND; i++) {
      const traceId = `bench-${runs++}`;
      const started = await runFlowFile({ flowPath, input: 'go', traceId, logPath: path.join(dir, 'runs', `${traceId}.jsonl`), fsync: 'never', allowFiles: [path.dirname(echoModule)] });
      const result = await started.finished();
      if (result.outcome.status !== 'done') throw new Error(`run ${traceId} of ${flowPath} ended ${JSON.stringify(result.outcome)}`);
    }
    return (performance.now() - start) / RUNS_PER_ROUND;
  };
  await perRun(flows.module);
  await perRun(flows.mcp);
  const wholeRuns = { module: [], mcp: [], ratio: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const m = await perRun(flows.module);
    const p = await perRun(flows.mcp);
    wholeRuns.module.push(m);
    wholeRuns.mcp.push(p);
    wholeRuns.ratio.push(p / m);
  }

  console.log(`MCP tool overhead: tool.mcp (server-everything echo, stdio) vs tool.module (the same echo), ${ROUNDS} rounds`);
  console.log(`  load average ${loadavg().map((load) => load.toFixed(2)).join(' ')} (wall-clock figures move with it: compare the ratios)`);
  console.log(`  per call (${CALLS_PER_ROUND} calls a round, connection open):`);
  console.log(`    tool.module   ${summary(calls.module, 1, 'µs')}`);
  console.log(`    tool.mcp      ${summary(calls.mcp, 1, 'µs')}`);
  console.log(`    mcp / module  ${summary(calls.ratio, 1, '×')}`);
  console.log(`    overhead      ${(median(calls.mcp) - median(calls.module)).toFixed(1)} µs a call (difference of the medians)`);
  console.log(`  per embedded run (${CALLS} calls, ${RUNS_PER_ROUND} runs a round; the MCP server started and stopped by each run):`);
  console.log(`    tool.module   ${summary(wholeRuns.module, 1, 'ms')}`);
  console.log(`    tool.mcp      ${summary(wholeRuns.mcp, 1, 'ms')}`);
  console.log(`    mcp / module  ${summary(wholeRuns.ratio, 2, '×')}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
