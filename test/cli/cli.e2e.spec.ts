// End-to-end tests of the `redflow` command: `run`, `validate`, exit codes and usage errors.
// They spawn the real CLI (`node bin/redflow.js`), which runs the compiled dist/: `npm test` builds
// it first (pretest); with plain vitest, run `npm run build` before. Each test works in its own
// temporary directory (its cwd), so the `.redflow/runs` logs land there. Replay and resume are in
// logs.e2e.spec.ts.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  ALLOW_EXAMPLES,
  EXAMPLES,
  ORDER_ANSWER,
  assertBuilt,
  copyExampleFlow,
  example,
  logPathOf,
  parseLog,
  readText,
  redflow,
  smallFlow,
  tempDirs,
  timelineLines,
  writeIn,
  type FlowJson,
  type RunJson,
} from './cliHarness.js';

const dirs = tempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

const GRAPH_FORMAT_ANSWER = '¡Hola! Soy un asistente útil. ¿En qué puedo ayudarte?';
const WEATHER_ANSWER = 'Yes: light rain in Paris today (high 11 °C), so take an umbrella.';

/** The weather example's local API, on a free port, and a copy of its flow pointing at it. */
let weatherServer: Server | undefined;
let weatherFlowDir: string;
let weatherFlow: string;

beforeAll(async () => {
  const api = (await import(pathToFileURL(path.join(EXAMPLES, 'weather-http', 'weather-api.mjs')).href)) as {
    startWeatherApi(port: number): Promise<Server>;
  };
  weatherServer = await api.startWeatherApi(0);
  const { port } = weatherServer.address() as AddressInfo;
  weatherFlowDir = await dirs.make();
  weatherFlow = await copyExampleFlow('weather-http', weatherFlowDir, (flow) => {
    const forecast = flow.nodes.find((node) => node.type === 'tool.http');
    if (!forecast?.config || typeof forecast.config.url !== 'string') throw new Error('the weather example has no tool.http url');
    forecast.config.url = forecast.config.url.replace('127.0.0.1:8787', `127.0.0.1:${port}`);
  });
});
afterAll(() => new Promise<void>((resolve) => (weatherServer ? weatherServer.close(() => resolve()) : resolve())));

/** How to run each example offline, and what it answers. */
const examples = [
  {
    name: 'order-status',
    args: () => [example('order-status'), '--input', 'Where is order A-1001?'],
    answer: ORDER_ANSWER,
    timeline: [
      { iteration: 1, action: 'tool', what: 'lookup_order' },
      { iteration: 2, action: 'tool', what: 'track_shipment' },
      { iteration: 3, action: 'final', what: '' },
    ],
    history: [
      { tool: 'lookup_order', status: 'succeeded' },
      { tool: 'track_shipment', status: 'succeeded' },
    ],
  },
  {
    name: 'graph-format',
    args: () => [example('graph-format'), '--script', path.join(EXAMPLES, 'graph-format', 'answers.json'), '--input', 'hola'],
    answer: GRAPH_FORMAT_ANSWER,
    timeline: [{ iteration: 1, action: 'final', what: '' }],
    history: [],
  },
  {
    name: 'weather-http',
    args: () => [weatherFlow, '--input', 'Should I take an umbrella in Paris today?'],
    answer: WEATHER_ANSWER,
    timeline: [
      { iteration: 1, action: 'tool', what: 'forecast' },
      { iteration: 2, action: 'final', what: '' },
    ],
    // The tool.http node really calls the local API (the scripted model would answer anyway).
    history: [{ tool: 'forecast', status: 'succeeded', output: { status: 200, body: { city: 'Paris', today: 'light rain' } } }],
  },
] as const;

describe.concurrent('redflow run (the examples)', () => {
  it.for(examples)('should run $name: answer on stdout, one stderr line per iteration, exit 0, and a log that exists', async (ex, { expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['run', ...ex.args()], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${ex.answer}\n`);
    expect(timelineLines(result.stderr)).toEqual(ex.timeline);

    const traceId = /^run (\S+)$/m.exec(result.stderr)?.[1];
    expect(traceId).toBeDefined();
    const log = logPathOf(result.stderr, cwd);
    expect(log).toBe(path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`));
    const records = parseLog(await readText(log));
    expect(records[0]).toMatchObject({ seq: 1, type: 'run.started' });
    expect(records.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { status: 'done', answer: ex.answer } } });
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
  });

  it.for(examples)('should print only {traceId, outcome, envelope, log, warnings} on stdout for $name with --json', async (ex, { expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['run', ...ex.args(), '--json'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as RunJson; // the whole of stdout is one JSON document
    expect(Object.keys(json).sort()).toEqual(['envelope', 'log', 'outcome', 'traceId', 'warnings']);
    expect(json.outcome).toEqual({ status: 'done', reason: 'final_answer', answer: ex.answer });
    expect(json.envelope.observability.traceId).toBe(json.traceId);
    expect(json.envelope.observability.outcome).toEqual(json.outcome);
    expect(json.envelope.observability.events).toHaveLength(ex.timeline.length);
    expect(json.log).toBe(path.join(cwd, '.redflow', 'runs', `${json.traceId}.jsonl`));
    expect(existsSync(json.log)).toBe(true);
    expect(timelineLines(result.stderr)).toEqual([]);
    expect(json.envelope.tools.history).toHaveLength(ex.history.length);
    expect(json.envelope.tools.history).toMatchObject(ex.history);
  });
});

describe.concurrent('redflow run (how runs end: exit codes)', () => {
  const lookup = { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.5 };

  it('should exit 2 when the run is escalated (no final answer within maxIterations)', async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = await writeIn(cwd, 'flow.json', smallFlow()); // maxIterations 2
    const script = await writeIn(cwd, 'never-final.json', [lookup, lookup, lookup, lookup]);
    const plain = await redflow(['run', flow, '--script', script, '--input', 'x', ...ALLOW_EXAMPLES], { cwd });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toContain('escalate (iteration_limit)');
    expect(plain.stderr).toContain('ITERATION_OVERFLOW');
    expect(timelineLines(plain.stderr)).toEqual([
      { iteration: 1, action: 'tool', what: 'lookup_order' },
      { iteration: 2, action: 'tool', what: 'lookup_order' },
    ]);
    const records = parseLog(await readText(logPathOf(plain.stderr, cwd)));
    expect(records.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { status: 'escalate', reason: 'iteration_limit' } } });
    expect(plain.stderr).toMatch(/^\s*hint: .*raise maxIterations/m);
  });

  it('should name the iteration_limit stop condition, not maxIterations, in the hint when the condition stopped the run', async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = smallFlow();
    flow.nodes[1]!.config = { ...flow.nodes[1]!.config, maxIterations: 5, stopConditions: [{ type: 'iteration_limit', value: 2 }] };
    const file = await writeIn(cwd, 'flow.json', flow);
    const script = await writeIn(cwd, 'never-final.json', [lookup, lookup, lookup, lookup, lookup]);
    const result = await redflow(['run', file, '--script', script, '--input', 'x', ...ALLOW_EXAMPLES], { cwd });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('reached the iteration_limit stop condition (2)');
    const hint = /^\s*hint: (.*)$/m.exec(result.stderr)?.[1];
    expect(hint).toContain("raise the iteration_limit stop condition's value");
    expect(hint).not.toContain('raise maxIterations');
  });

  it('should exit 1 and show INVALID_JSON when the model answers something that is not JSON', async ({ expect }) => {
    const cwd = await dirs.make();
    const script = await writeIn(cwd, 'answers.json', ['not json']);
    const result = await redflow(['run', example('order-status'), '--script', script, '--input', 'x', '--trace-id', 'bad_answer-1'], { cwd });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('blocked (invalid_answer) INVALID_JSON');
    expect(timelineLines(result.stderr)).toEqual([{ iteration: 1, action: 'error', what: 'INVALID_JSON' }]);
    // The log is named after --trace-id.
    expect(logPathOf(result.stderr, cwd)).toBe(path.join(cwd, '.redflow', 'runs', 'bad_answer-1.jsonl'));
    expect(parseLog(await readText(logPathOf(result.stderr, cwd))).at(-1)).toMatchObject({ type: 'run.failed' });
  });

  it('should exit 1 with TOOL_NOT_ALLOWED when the model picks a tool outside allowedTools', async ({ expect }) => {
    const cwd = await dirs.make();
    const script = await writeIn(cwd, 'answers.json', [{ action: 'tool', tool: 'delete_everything', input: {}, confidence: 0.9 }]);
    const [plain, json] = await Promise.all([
      redflow(['run', example('order-status'), '--script', script, '--input', 'x'], { cwd }),
      redflow(['run', example('order-status'), '--script', script, '--input', 'x', '--json'], { cwd }),
    ]);
    expect(plain.code, plain.stderr).toBe(1);
    expect(plain.stderr).toContain('TOOL_NOT_ALLOWED');
    expect(plain.stderr).toContain('hint: allowed tools: lookup_order, track_shipment');
    expect(json.code, json.stderr).toBe(1);
    const { outcome, envelope } = JSON.parse(json.stdout) as RunJson;
    expect(outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: 'TOOL_NOT_ALLOWED' } });
    expect(envelope.tools.history).toEqual([]);
  });
});

describe.concurrent('redflow run (refusals before the run starts)', () => {
  it('should exit 65 with the diagnostics when the flow is invalid, and write no log', async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = smallFlow();
    flow.nodes.push({ id: 'lookup_order', type: 'response.end' });
    const file = await writeIn(cwd, 'flow.json', flow);
    const result = await redflow(['run', file, '--input', 'x'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('DUPLICATE_NODE_ID');
    expect(result.stderr).toContain('is not a valid flow (1 error)');
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

  it("should exit 65 with RUN_INPUT_INVALID when the input does not match the trigger's inputSchema", async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = smallFlow();
    flow.nodes[0]!.config = {
      inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } }, additionalProperties: false },
    };
    const file = await writeIn(cwd, 'flow.json', flow);
    const [bad, good] = await Promise.all([
      redflow(['run', file, '--input', '{"order":"A-1001"}', ...ALLOW_EXAMPLES], { cwd }),
      redflow(['run', file, '--input', '{"orderId":"A-1001"}', '--json', ...ALLOW_EXAMPLES], { cwd }),
    ]);
    expect(bad.code, bad.stderr).toBe(65);
    expect(bad.stderr).toContain('error RUN_INPUT_INVALID');
    expect(bad.stdout).toBe('');
    expect(good.code, good.stderr).toBe(0);
    expect((JSON.parse(good.stdout) as RunJson).envelope.input).toEqual({ orderId: 'A-1001' });
    // Only the good run wrote a log.
    expect(await readdir(path.join(cwd, '.redflow', 'runs'))).toHaveLength(1);
  });

  it('should exit 66 with ANSWERS_FILE_NOT_FOUND when the --script file does not exist, and write no log', async ({ expect }) => {
    const cwd = await dirs.make();
    const [run, resume] = await Promise.all([
      redflow(['run', example('order-status'), '--script', 'missing-answers.json', '--input', 'x'], { cwd }),
      redflow(['resume', 'run.jsonl', '--script', 'missing-answers.json'], { cwd }),
    ]);
    for (const result of [run, resume]) {
      expect(result.code, result.stderr).toBe(66);
      expect(result.stderr).toContain('error ANSWERS_FILE_NOT_FOUND: cannot read the scripted answers');
      expect(result.stderr).toContain('missing-answers.json: there is no such file');
      expect(result.stderr).toMatch(/^hint: give the path of a JSON file/m);
    }
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

  it('should exit 66 with INPUT_FILE_NOT_FOUND when the --input-file does not exist, and write no log', async ({ expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['run', example('order-status'), '--input-file', 'missing-input.txt'], { cwd });
    expect(result.code, result.stderr).toBe(66);
    expect(result.stderr).toContain('error INPUT_FILE_NOT_FOUND: cannot read the input file missing-input.txt: there is no such file');
    expect(result.stderr).not.toContain('FLOW_NOT_FOUND');
    expect(result.stderr).toMatch(/^hint: give --input-file the path of a readable file/m);
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

  it('should refuse a --log that already holds a finished run, leave it alone and point to resume', async ({ expect }) => {
    const cwd = await dirs.make();
    const first = await redflow(['run', example('order-status'), '--log', 'run.jsonl'], { cwd });
    expect(first.code, first.stderr).toBe(0);
    const before = await readFile(path.join(cwd, 'run.jsonl'));
    const again = await redflow(['run', example('order-status'), '--log', 'run.jsonl', '--input', 'again'], { cwd });
    expect(again.code, again.stderr).toBe(64);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('already holds a run');
    expect(again.stderr).toMatch(/hint: .*redflow resume/);
    expect((await readFile(path.join(cwd, 'run.jsonl'))).equals(before)).toBe(true);
  });
});

describe.concurrent('redflow run --conversation (memory)', () => {
  it("should load the first turn into the second run's envelope.memory", async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = await copyExampleFlow('order-status', cwd); // its memory.kv lives under cwd/.redflow/memory
    const first = await redflow(['run', flow, '--conversation', 'c1', '--input', 'Where is order A-1001?', '--json'], { cwd });
    expect(first.code, first.stderr).toBe(0);
    const one = JSON.parse(first.stdout) as RunJson;
    expect(one.envelope.memory?.turns ?? []).toEqual([]);

    const [second, other] = await Promise.all([
      redflow(['run', flow, '--conversation', 'c1', '--input', 'And when does it arrive?', '--json'], { cwd }),
      redflow(['run', flow, '--conversation', 'c2', '--input', 'Another conversation', '--json'], { cwd }),
    ]);
    expect(second.code, second.stderr).toBe(0);
    const two = JSON.parse(second.stdout) as RunJson;
    expect(two.envelope.memory?.turns).toEqual([{ input: 'Where is order A-1001?', answer: ORDER_ANSWER, outcome: 'done', traceId: one.traceId }]);
    expect(two.traceId).not.toBe(one.traceId);
    // Another conversation starts empty.
    expect(other.code, other.stderr).toBe(0);
    expect((JSON.parse(other.stdout) as RunJson).envelope.memory?.turns ?? []).toEqual([]);
  });
});

/** A flow file that is not JSON; the error is at line 5, column 5 (the missing comma). */
const NOT_JSON = `{
  "id": "broken",
  "nodes": [
    { "id": "in", "type": "trigger.input" }
    { "id": "agent", "type": "agent.core" }
  ],
  "edges": []
}
`;

const badFlows: { name: string; code: string; flow: () => FlowJson | string; mention?: string }[] = [
  { name: 'not JSON', code: 'FLOW_INVALID_JSON', flow: () => NOT_JSON, mention: 'line 5, column 5' },
  { name: 'missing fields', code: 'FLOW_SCHEMA_MISMATCH', flow: () => ({ id: 'x' }) as unknown as FlowJson, mention: "'nodes'" },
  {
    name: 'an unknown node type',
    code: 'UNKNOWN_NODE_TYPE',
    flow: () => {
      const flow = smallFlow();
      flow.nodes.push({ id: 'db', type: 'tool.mysql' });
      return flow;
    },
    mention: 'tool.mysql',
  },
  {
    name: 'duplicate node ids',
    code: 'DUPLICATE_NODE_ID',
    flow: () => {
      const flow = smallFlow();
      flow.nodes.push({ id: 'model', type: 'response.end' });
      return flow;
    },
  },
  {
    name: 'an edge to a missing node',
    code: 'EDGE_NODE_MISSING',
    flow: () => {
      const flow = smallFlow();
      flow.edges.push({ id: 'e9', source: 'agent', target: 'ghost' });
      return flow;
    },
    mention: 'ghost',
  },
  {
    name: 'a forbidden edge (tool → model)',
    code: 'EDGE_NOT_ALLOWED',
    flow: () => {
      const flow = smallFlow();
      flow.edges.push({ id: 'e9', source: 'lookup_order', target: 'model' });
      return flow;
    },
  },
  {
    name: 'no agent core',
    code: 'NO_AGENT_CORE',
    flow: () => {
      const flow = smallFlow();
      flow.nodes = flow.nodes.filter((node) => node.type !== 'agent.core');
      flow.edges = [];
      return flow;
    },
  },
];

describe.concurrent('redflow validate', () => {
  it.for(['order-status', 'graph-format', 'weather-http', 'openai-agent'])('should find the %s example valid (exit 0)', async (name, { expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['validate', example(name)], { cwd });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(`${example(name)}: valid`);
    expect(result.stdout).not.toMatch(/^error /m);
  });

  it('should print {ok, errors, warnings} with --json for a valid flow with a warning', async ({ expect }) => {
    // With its model's key set: without it, ENV_NOT_SET would be a second warning.
    const result = await redflow(['validate', example('graph-format'), '--json'], { cwd: await dirs.make(), env: { OPENAI_API_KEY: 'sk-test' } });
    expect(result.code, result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout) as { ok: boolean; errors: unknown[]; warnings: { code: string; severity: string }[] };
    expect(parsed.ok).toBe(true);
    expect(parsed.errors).toEqual([]);
    expect(parsed.warnings).toMatchObject([{ code: 'TOOL_WITHOUT_INPUT_SCHEMA', severity: 'warning' }]);
  });

  it.for(badFlows)('should exit 65 and report $code for a flow with $name', async (bad, { expect }) => {
    const cwd = await dirs.make();
    await writeIn(cwd, 'bad.json', bad.flow());
    // --json for a few of them: each run costs a Node start.
    const withJson = ['FLOW_INVALID_JSON', 'EDGE_NOT_ALLOWED'].includes(bad.code);
    const [plain, json] = await Promise.all([
      redflow(['validate', 'bad.json'], { cwd }),
      withJson ? redflow(['validate', 'bad.json', '--json'], { cwd }) : undefined,
    ]);
    expect(plain.code, plain.stdout + plain.stderr).toBe(65);
    expect(plain.stdout).toMatch(new RegExp(`^error ${bad.code} `, 'm'));
    expect(plain.stdout).toMatch(/^bad\.json: \d+ errors?$/m);
    // Without a mention to look for, there is nothing more to check in the text.
    expect(plain.stdout).toContain(bad.mention ?? '');

    if (!json) return;
    expect(json.code, json.stderr).toBe(65);
    const parsed = JSON.parse(json.stdout) as { ok: boolean; errors: { code: string; message: string }[] };
    expect(parsed.ok).toBe(false);
    expect(parsed.errors.map((e) => e.code)).toContain(bad.code);
    expect(parsed.errors.find((e) => e.code === bad.code)?.message).toContain(bad.mention ?? '');
  });

  it('should exit 66 when the flow file does not exist', async ({ expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['validate', 'nope.json', '--json'], { cwd });
    expect(result.code, result.stderr).toBe(66);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('FLOW_NOT_FOUND');
  });

  it('should exit 66 when run is given a flow file that does not exist', async ({ expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['run', 'nope.json'], { cwd });
    expect(result.code, result.stderr).toBe(66);
    expect(result.stderr).toContain('FLOW_NOT_FOUND');
  });
});

describe.concurrent('usage', () => {
  it('should print the main usage for --help, exit 0', async ({ expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['--help'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('usage: redflow <command> [options]');
    for (const command of ['run', 'validate', 'replay', 'resume']) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('should print the usage and exit 64 without a command', async ({ expect }) => {
    const result = await redflow([], { cwd: await dirs.make() });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stdout).toContain('usage: redflow <command> [options]');
  });

  it.for(['run', 'validate', 'replay', 'resume'])('should print the usage of %s for --help, exit 0', async (command, { expect }) => {
    const cwd = await dirs.make();
    const result = await redflow([command, '--help'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.startsWith(`usage: redflow ${command} `)).toBe(true);
    expect(result.stderr).toBe('');
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

  it('should list in run --help every exit code a run can end with', async ({ expect }) => {
    const result = await redflow(['run', '--help'], { cwd: await dirs.make() });
    const listed = /Exit codes: ([^]*?)\n\n/.exec(result.stdout)?.[1] ?? '';
    for (const [code, meaning] of [[0, 'done'], [1, 'blocked'], [2, 'escalated'], [3, 'waiting'], [4, 'delegated'], [64, 'usage'], [65, 'invalid'], [66, 'missing'], [69, 'the inspector']] as const) {
      expect(listed).toMatch(new RegExp(`\\b${code} ${meaning}`));
    }
  });

  it('should exit 64 with a message for an unknown command', async ({ expect }) => {
    const result = await redflow(['bogus'], { cwd: await dirs.make() });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stderr).toContain('unknown command "bogus"');
    expect(result.stderr).toContain('commands: run, validate, replay, resume');
  });

  it.for(['run', 'resume'])('should exit 64 with a message for an unknown flag of %s', async (command, { expect }) => {
    const result = await redflow([command, 'x.json', '--bogus'], { cwd: await dirs.make() });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stderr).toContain('error CLI_USAGE');
    expect(result.stderr).toContain("'--bogus'");
    expect(result.stderr).toContain(`hint: usage: redflow ${command} `);
  });

  it('should exit 64 when run is given no flow', async ({ expect }) => {
    const result = await redflow(['run', '--input', 'hello'], { cwd: await dirs.make() });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stderr).toContain('which flow?');
  });

  it.for(['../escape', 'x'.repeat(129)])('should exit 64 for --trace-id %s and write no log', async (traceId, { expect }) => {
    const cwd = await dirs.make();
    const result = await redflow(['run', example('order-status'), '--trace-id', traceId], { cwd });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stderr).toContain('--trace-id must be');
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

});
