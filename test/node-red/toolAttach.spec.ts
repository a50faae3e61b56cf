import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../src/contracts/schema-types.js';
import { encodeJsonlLog, readJsonlLog } from '../../src/events/jsonlEventStore.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { helper, loadFlow, nextMessage, withUserDir } from './nodeRedHarness.js';

// A tool of a Node-RED agent that says where its work lives (`context.attach`): the run logs it as
// tool.attached, and the call sent again when the run is resumed after a crash carries it back.

/** A module tool that starts a "job" named after its call, or goes back to the one it started before. */
const JOB_TOOL = `export default {
  name: 'job',
  description: 'runs a long job',
  inputSchema: { type: 'object', properties: {} },
  execute: (input, context) => {
    if (context.attached !== undefined) return { job: context.attached.job, started: false };
    const job = 'job-' + context.idempotencyKey;
    context.attach?.({ job });
    return { job, started: true };
  },
};
`;

const flow: NodeRedNodeConfig[] = [
  { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['job'], []] },
  {
    id: 'model',
    type: 'redflow-model',
    provider: 'scripted',
    answers: [{ action: 'tool', tool: 'job', input: {}, confidence: 0.5 }, { action: 'final', message: 'job done', confidence: 0.9 }],
    wires: [],
  },
  { id: 'job', type: 'redflow-tool-module', module: 'job.mjs', wires: [] },
  { id: 'answer', type: 'capture' },
];

type Answered = { traceId: string; logPath: string; resumed?: boolean; outcome: RunOutcome; envelope: { tools: { history: { output?: unknown }[] } } };

describe("a Node-RED agent's tool that attaches its work", () => {
  let userDir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ userDir, remove } = await withUserDir());
    await writeFile(path.join(userDir, 'job.mjs'), JOB_TOOL);
  });
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  it('should have its handle logged as tool.attached, and a run resumed after it get the handle back instead of starting the work again', async () => {
    await loadFlow(userDir, flow);
    let answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'go' });
    const first = (await answered).redflow as Answered;
    await helper.unload();
    const { traceId, logPath } = first;
    expect(first.envelope.tools.history[0]?.output).toEqual({ job: `job-${traceId}:1`, started: true });
    const { events } = await readJsonlLog(logPath);
    const attachedAt = events.findIndex((event) => event.type === 'tool.attached');
    expect(events[attachedAt]?.data).toEqual({ tool: 'job', idempotencyKey: `${traceId}:1`, handle: { job: `job-${traceId}:1` } });

    // Node-RED died there: the log ends with the attachment, and its lock names a dead process.
    await writeFile(logPath, encodeJsonlLog(events.slice(0, attachedAt + 1)));
    await writeFile(`${logPath}.lock`, '999999999\n');
    await loadFlow(userDir, flow);
    answered = nextMessage('answer');
    const resumed = (await answered).redflow as Answered;
    expect(resumed).toMatchObject({ traceId, resumed: true, outcome: { status: 'done', answer: 'job done' } });
    expect(resumed.envelope.tools.history[0]?.output).toEqual({ job: `job-${traceId}:1`, started: false });
  });
});
