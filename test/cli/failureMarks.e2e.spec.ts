// The CLI as a debugger: a failure is never printed like a success.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ALLOW_EXAMPLES, assertBuilt, logPathOf, redflow, smallFlow, tempDirs, writeIn } from './cliHarness.js';

const dirs = tempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

/** The timeline lines (`  #1  tool …`) of some output, trimmed. */
const stepLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => /^\s+#\d+\s/.test(line))
    .map((line) => line.trim());

describe.concurrent('redflow run and replay: failures are marked', () => {
  it('should end the line of a failed tool call with ✖ and its code, live and in the replay, and leave a good call unmarked', async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = await writeIn(cwd, 'flow.json', smallFlow());
    const script = await writeIn(cwd, 'answers.json', [
      { action: 'tool', tool: 'lookup_order', input: { orderId: 'Z-9999' }, confidence: 0.6 },
      { action: 'final', message: 'no such order', confidence: 0.9 },
    ]);
    const run = await redflow(['run', flow, '--script', script, '--input', 'x', ...ALLOW_EXAMPLES], { cwd });
    expect(run.code, run.stderr).toBe(0);
    const live = stepLines(run.stderr);
    expect(live).toHaveLength(2);
    expect(live[0]).toMatch(/^#1\s+tool\s+lookup_order\s+conf 0\.60\s+\d+ ms\s+✖ TOOL_FAILED$/);
    expect(live[1]).not.toContain('✖');

    const replay = await redflow(['replay', logPathOf(run.stderr, cwd)], { cwd });
    expect(replay.code, replay.stderr).toBe(0);
    const replayed = stepLines(replay.stdout + replay.stderr);
    expect(replayed[0]).toMatch(/^#1\s+tool\s+lookup_order\s+.*✖ TOOL_FAILED$/);
    expect(replayed.filter((line) => line.includes('✖'))).toHaveLength(1);
  });
});

describe.concurrent('redflow run: a final answer without a message', () => {
  it('should exit 1 with FINAL_MESSAGE_MISSING and its hint instead of ending done with an empty answer', async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = await writeIn(cwd, 'flow.json', smallFlow());
    const script = await writeIn(cwd, 'answers.json', [{ action: 'final', confidence: 0.9 }]);
    const run = await redflow(['run', flow, '--script', script, '--input', 'x', ...ALLOW_EXAMPLES], { cwd });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('blocked (invalid_answer) FINAL_MESSAGE_MISSING');
    expect(run.stderr).toMatch(/^\s*hint: a final answer needs a non-empty "message"/m);
    expect(stepLines(run.stderr)[0]).toMatch(/^#1\s+error\s+FINAL_MESSAGE_MISSING/);
  });
});

describe.concurrent('redflow run: a run stopped by the confidence threshold', () => {
  it('should print what the run has as its answer on stdout, and why it stopped on stderr', async ({ expect }) => {
    const cwd = await dirs.make();
    const flow = smallFlow();
    flow.nodes[1]!.config = { ...flow.nodes[1]!.config, stopConditions: [{ type: 'confidence_threshold', value: 0.8 }] };
    const file = await writeIn(cwd, 'flow.json', flow);
    const script = await writeIn(cwd, 'answers.json', [
      { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.9, message: 'Found the order.' },
    ]);
    const run = await redflow(['run', file, '--script', script, '--input', 'x', ...ALLOW_EXAMPLES], { cwd });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      'Found the order.\n\nlookup_order: {"orderId":"A-1001","status":"shipped","carrier":"FastShip","trackingCode":"FS-77812","placedAt":"2026-11-17"}\n',
    );
    expect(run.stderr).toContain('done_partial (confidence_threshold): stopped after a tool call: its confidence 0.9 reached the confidence_threshold 0.8');

    const replay = await redflow(['replay', logPathOf(run.stderr, cwd)], { cwd });
    expect(replay.stdout).toContain('answer: Found the order.\n\nlookup_order: {"orderId":"A-1001"');
  });
});
