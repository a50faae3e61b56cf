import { describe, expect, it } from 'vitest';
import { fold } from '../../src/events/evolve.js';
import { PARTIAL_ANSWER_PART_MAX_CHARS, partialAnswer } from '../../src/machines/outcomes.js';
import { agentConfig, countingTool, runScripted } from '../support/harness.js';

const confident = (message?: string) => ({
  action: 'tool',
  tool: 'echo',
  input: { text: 'hi' },
  confidence: 0.95,
  ...(message !== undefined && { message }),
  thought: 'a private thought',
});
const stopAt = (value: number) => agentConfig({ stopConditions: [{ type: 'confidence_threshold', value }] });

describe('the answer of a run stopped by the confidence threshold', () => {
  it('should be the model’s message and the last tool output, with the reason in reason and detail', async () => {
    const { result, events } = await runScripted({ answers: [confident('Here is what I found.')], agent: stopAt(0.9) });
    expect(result.outcome).toEqual({
      status: 'done_partial',
      reason: 'confidence_threshold',
      answer: 'Here is what I found.\n\necho: {"echoed":{"text":"hi"}}',
      detail: 'stopped after a tool call: its confidence 0.95 reached the confidence_threshold 0.9',
    });
    expect(result.outcome.answer).not.toContain('private');
    // Computed from the envelope: the same from the log.
    expect(fold(events).observability.outcome).toEqual(result.outcome);
  });

  it('should be the tool output alone when the call has no message, and say a failed call failed', async () => {
    const plain = await runScripted({ answers: [confident()], agent: stopAt(0.9) });
    expect(plain.result.outcome.answer).toBe('echo: {"echoed":{"text":"hi"}}');
    const failing = countingTool('echo', () => {
      throw new Error('the service is down');
    });
    const failed = await runScripted({ answers: [confident()], agent: stopAt(0.9), tools: [failing.tool] });
    expect(failed.result.outcome.answer).toMatch(/^echo failed: TOOL_FAILED: .*the service is down/);
  });

  it('should cut a long output, whole characters only, and say how long it was', async () => {
    // One ASCII character first: the limit falls inside a surrogate pair.
    const long = `a${'😀'.repeat(PARTIAL_ANSWER_PART_MAX_CHARS)}`;
    const tool = countingTool('echo', () => long).tool;
    const { result } = await runScripted({ answers: [confident()], agent: stopAt(0.9), tools: [tool] });
    const answer = result.outcome.answer ?? '';
    expect(answer.startsWith(`echo: a${'😀'.repeat(PARTIAL_ANSWER_PART_MAX_CHARS / 2 - 1)}…`)).toBe(true);
    expect(answer).toContain(`(cut: ${long.length} characters in all)`);
    expect(answer.isWellFormed()).toBe(true);
    expect(partialAnswer(fold([]))).toBe('no tool output');
  });
});
