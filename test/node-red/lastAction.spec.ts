import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { lastAction } from '../../src/nodeRed/lastAction.js';
import { REPO_ROOT } from '../support/cli.js';

// A real run's log (order-status: two tool calls, then a final answer), read whole and cut short.
describe("an agent's last action, from its run's log", () => {
  let dir: string;
  let events: readonly AgentEvent[];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-last-action-'));
    const logPath = path.join(dir, 'last-action-1.jsonl');
    const run = await runFlowFile({ flowPath: path.join(REPO_ROOT, 'examples/order-status/flow.json'), input: 'Where is A-1001?', traceId: 'last-action-1', logPath });
    await run.finished();
    ({ events } = await readJsonlLog(logPath));
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is the answer the run ended with', () => {
    expect(lastAction(events)).toEqual({ kind: 'answer', status: 'done', answer: expect.stringContaining('A-1001') });
  });

  it('is the last tool called, with its input, while the run has not answered', () => {
    const beforeTheEnd = events.slice(0, events.findLastIndex((event) => event.type === 'tool.completed'));
    expect(lastAction(beforeTheEnd)).toEqual({ kind: 'tool', tool: 'track_shipment', input: expect.any(Object) });
  });

  it('is nothing before the first tool call or answer', () => {
    expect(lastAction(events.slice(0, 1))).toBeUndefined();
  });
});
