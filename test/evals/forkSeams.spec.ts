import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addEvalCase } from '../../src/evals/addCase.js';
import { runEvalSuite } from '../../src/evals/runSuite.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT } from '../support/cli.js';

// The `model` and `all` seams of runEvalSuite, on forked runs of a case recorded with the
// order-status example. In the changed flow the lookup_order tool fails whenever it really runs,
// so a call answered from the record shows as a success.

let dir: string;
let changedFlow: string;
const ANSWER = 'Order A-1001 shipped with FastShip (tracking FS-77812). It was last scanned at the Lyon sorting centre and should arrive on 2026-11-23.';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-seams-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'agent'), { recursive: true });
  const run = await runFlowFile({ flowPath: path.join(dir, 'agent', 'flow.json'), input: 'Where is A-1001?', logPath: path.join(dir, 'runs', 'a1001.jsonl'), fsync: 'never' });
  await run.finished();
  await addEvalCase({ log: path.join(dir, 'runs', 'a1001.jsonl'), suite: path.join(dir, 'suite') });
  await writeFile(
    path.join(dir, 'agent', 'tools', 'broken.mjs'),
    `export default { name: 'lookup_order', description: 'Finds an order', inputSchema: { type: 'object' }, execute() { throw new Error('the live tool ran'); } };\n`,
  );
  const flow = JSON.parse(await readFile(path.join(dir, 'agent', 'flow.json'), 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
  const answers = [
    { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.6 },
    { action: 'tool', tool: 'track_shipment', input: { trackingCode: 'FS-00001' }, confidence: 0.8 },
    { action: 'final', message: ANSWER, confidence: 0.9 },
  ];
  flow.nodes = flow.nodes.map((node) =>
    node.id === 'lookup_order' ? { ...node, config: { module: 'tools/broken.mjs' } } : node.id === 'model' ? { ...node, config: { provider: 'scripted', answers } } : node,
  );
  changedFlow = path.join(dir, 'agent', 'flow.changed.json');
  await writeFile(changedFlow, JSON.stringify(flow));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the eval seams that fork the recorded run', () => {
  it('should run `all` from iteration 1 with recorded tool results where the call matches and live tools where not, saying which', async () => {
    const report = await runEvalSuite({ suite: path.join(dir, 'suite'), flowPath: changedFlow, seam: 'all', outDir: path.join(dir, 'out-all') });
    const [row] = report.cases;
    expect(row?.fork).toEqual({
      atIteration: 1,
      toolCalls: [
        { iteration: 1, tool: 'lookup_order', source: 'recorded' },
        { iteration: 2, tool: 'track_shipment', source: 'live' },
      ],
    });
    const { events } = await readJsonlLog(path.join(dir, 'out-all', 'a1001.jsonl'));
    expect(events[1]).toMatchObject({ type: 'run.forked', data: { atIteration: 1, parent: { log: path.join(dir, 'suite', 'a1001.jsonl') } } });
    // The broken tool never ran: the record answered its call.
    expect(events.find((e) => e.type === 'tool.completed' && e.iteration === 1)?.data).toMatchObject({ ok: true, output: { carrier: 'FastShip' } });
    expect(row).toMatchObject({ result: 'pass', eval: { status: 'done' } });
  });

  it('should run `model` with the recorded prefix up to the last model call and that call live', async () => {
    const report = await runEvalSuite({ suite: path.join(dir, 'suite'), flowPath: changedFlow, seam: 'model', outDir: path.join(dir, 'out-model') });
    const [row] = report.cases;
    expect(row?.fork).toEqual({ atIteration: 3, toolCalls: [] });
    const { events } = await readJsonlLog(path.join(dir, 'out-model', 'a1001.jsonl'));
    const live = events.filter((e) => e.type === 'model.requested' && e.seq > 2 + (events[1]?.data as { atSeq: number }).atSeq);
    expect(live.map((e) => e.iteration)).toEqual([3]);
    expect(row).toMatchObject({ result: 'pass', eval: { status: 'done', iterations: 3 } });
  });
});
