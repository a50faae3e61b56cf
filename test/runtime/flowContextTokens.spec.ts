import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { ECHO_TOOL, echoFlow } from '../editor/echoFlow.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-context-tokens-'));
  await mkdir(path.join(dir, 'tools'));
  await writeFile(path.join(dir, 'tools/echo.mjs'), ECHO_TOOL);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The echo flow with a window of `contextTokens` on its model, written to `<dir>/<name>.json`. */
async function flowWithWindow(name: string, contextTokens: number, answers: unknown[]): Promise<string> {
  const flow = echoFlow(answers);
  const model = flow.nodes.find((node) => node.id === 'llm') as { config: Record<string, unknown> };
  model.config = { ...model.config, model: 'gpt-4o', contextTokens, maxTokens: 100 };
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(flow));
  return file;
}

const tool = (text: string) => ({ action: 'tool', tool: 'echo', input: { text }, confidence: 0.5 });

describe('contextTokens on a model.llm node', () => {
  it('is part of the flow format', () => {
    const flow = echoFlow([]);
    (flow.nodes[1] as { config: Record<string, unknown> }).config.contextTokens = 100;
    expect(validateFlow(flow).ok).toBe(false);
    (flow.nodes[1] as { config: Record<string, unknown> }).config.contextTokens = 4096;
    expect(validateFlow(flow).ok).toBe(true);
  });

  it('keeps a long run within the window: the oldest calls are left out and the log says how many', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(60);
    const file = await flowWithWindow('long', 1500, [tool(`a ${long}`), tool(`b ${long}`), tool(`c ${long}`), tool(`d ${long}`), { action: 'final', message: 'done' }]);
    const logPath = path.join(dir, 'long.jsonl');
    const run = await runFlowFile({ flowPath: file, input: 'echo four long texts', logPath });
    expect((await run.handle.result).outcome.status).toBe('done');
    const { events } = await readJsonlLog(logPath);
    const omitted = events.filter((e) => e.type === 'model.requested').map((e) => (e.data as { omittedMessages?: number }).omittedMessages ?? 0);
    expect(omitted[0]).toBe(0);
    expect(Math.max(...omitted)).toBeGreaterThan(0);
  });

  it('refuses a run whose input alone overflows the window, before anything is recorded', async () => {
    const file = await flowWithWindow('tiny', 600, [{ action: 'final', message: 'never' }]);
    const logPath = path.join(dir, 'tiny.jsonl');
    await expect(runFlowFile({ flowPath: file, input: 'word '.repeat(2000), logPath })).rejects.toMatchObject({ code: ErrorCode.CONTEXT_BUDGET_EXCEEDED });
    expect(existsSync(logPath)).toBe(false);
  });
});
