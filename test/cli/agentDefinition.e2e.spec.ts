import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readVerifiedLog, runCli } from '../support/cli.js';

// `redflow run <module>` runs the AgentDefinition a TypeScript or JavaScript module exports by
// default, as it runs a flow: logged, shown live, killed mid-run and resumed with `redflow resume`.

/** A definition module: a scripted model and a tool that appends each call's order id to effects.txt. */
function definitionModule(extra = ''): string {
  return `import type { AgentDefinition, ToolDefinition } from 'redflow';
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const effects = fileURLToPath(new URL('./effects.txt', import.meta.url));

const lookupOrder: ToolDefinition<{ order: string }> = {
  name: 'lookup_order',
  description: 'Finds an order by its id',
  inputSchema: { type: 'object', required: ['order'], properties: { order: { type: 'string' } } },
  execute: ({ order }) => {
    appendFileSync(effects, order + '\\n');
    return { order, status: 'shipped' };
  },
};

const orderDesk: AgentDefinition = {
  name: 'order-desk',
  description: 'Answers customers about their orders',
  promptConfig: { systemPrompt: 'You help \${customer}.', query: 'Where is order \${order}?' },
  modelConfig: {
    provider: 'scripted',
    answers: [
      { action: 'tool', tool: 'lookup_order', input: { order: 'A-1001' }, confidence: 0.6 },
      { action: 'final', message: 'Order A-1001 has shipped.', confidence: 0.95 },
    ],
  },
  toolConfig: { tools: [lookupOrder] },
  inputConfig: { inputs: { customer: { type: 'string' }, order: { type: 'string' } } },
  ${extra}
};

export default orderDesk;
`;
}

const INPUTS = JSON.stringify({ customer: 'Ada', order: 'A-1001' });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cli-agent-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function effects(): Promise<string[]> {
  try {
    return (await readFile(path.join(dir, 'effects.txt'), 'utf8')).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('redflow run <agent definition module>', () => {
  it('should run a TypeScript definition like a flow: the answer on stdout, iterations and the log on stderr, a log replay reads', async () => {
    await writeFile(path.join(dir, 'order-desk.ts'), definitionModule());
    const run = await runCli(['run', 'order-desk.ts', '--input', INPUTS, '--log', 'run.jsonl'], { cwd: dir });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('Order A-1001 has shipped.');
    expect(run.stderr).toMatch(/#1\s+tool\s+lookup_order/);
    expect(run.stderr).toContain('log: run.jsonl');
    const { events } = await readVerifiedLog(path.join(dir, 'run.jsonl'));
    expect(events[0]?.data).toMatchObject({ input: 'Where is order A-1001?', flow: { id: 'order-desk', path: path.join(dir, 'order-desk.ts') } });
    expect(await effects()).toEqual(['A-1001']);
    const replay = await runCli(['replay', 'run.jsonl'], { cwd: dir });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('Order A-1001 has shipped.');
  });

  it('should resume a run killed after each event with redflow resume <log>, making the tool call once', async () => {
    await writeFile(path.join(dir, 'order-desk.mts'), definitionModule());
    const whole = await runCli(['run', 'order-desk.mts', '--input', INPUTS, '--log', 'whole.jsonl', '--json'], { cwd: dir });
    expect(whole.code).toBe(0);
    const eventCount = (await readVerifiedLog(path.join(dir, 'whole.jsonl'))).events.length;
    const outcome = (JSON.parse(whole.stdout) as { outcome: unknown }).outcome;
    for (let after = 1; after < eventCount; after += 1) {
      await rm(path.join(dir, 'effects.txt'), { force: true });
      const log = `cut-${after}.jsonl`;
      const killed = await runCli(['run', 'order-desk.mts', '--input', INPUTS, '--log', log], { cwd: dir, env: { REDFLOW_CRASH_AFTER_EVENT: String(after) } });
      expect(killed.signal).toBe('SIGKILL');
      const resumed = await runCli(['resume', log, '--json'], { cwd: dir });
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect((JSON.parse(resumed.stdout) as { outcome: unknown }).outcome).toEqual(outcome);
      expect(await effects()).toEqual(['A-1001']);
    }
  }, 120_000);

  it('should refuse a module without a definition (65), inputs that are not an object (64) and inputs the definition does not take (65)', async () => {
    await writeFile(path.join(dir, 'empty.js'), 'export const nothing = 1;\n');
    const empty = await runCli(['run', 'empty.js'], { cwd: dir });
    expect(empty.code).toBe(65);
    expect(empty.stderr).toContain('AGENT_DEFINITION_INVALID');
    expect(empty.stderr).toContain('no default export');

    await writeFile(path.join(dir, 'order-desk.ts'), definitionModule());
    const text = await runCli(['run', 'order-desk.ts', '--input', 'where is my order?'], { cwd: dir });
    expect(text.code).toBe(64);
    const missing = await runCli(['run', 'order-desk.ts', '--input', '{"customer":"Ada"}'], { cwd: dir });
    expect(missing.code).toBe(65);
    expect(missing.stderr).toContain('AGENT_INPUT_INVALID');

    await writeFile(path.join(dir, 'broken.ts'), definitionModule("runConfig: { maxTurns: 99 },"));
    const broken = await runCli(['run', 'broken.ts', '--input', INPUTS], { cwd: dir });
    expect(broken.code).toBe(65);
    expect(broken.stderr).toContain('runConfig.maxTurns');
    // Nothing was recorded for a refused run.
    expect(await effects()).toEqual([]);
  });
});
