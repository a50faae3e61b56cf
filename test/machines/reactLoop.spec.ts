import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { validators } from '../../src/contracts/schemas.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';

describe('the REACT loop', () => {
  it('should end with the final answer when the model answers final at once', async () => {
    const { result, events, modelCalls } = await runScripted({ answers: [answer.final('hi there')] });
    expect(result.outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'hi there' });
    expect(result.envelope.state).toEqual({ iteration: 1, lastAction: 'final', completed: true });
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'run.completed']);
    expect(modelCalls).toBe(1);
  });

  it('should call the tool, show the model the observation, and finish', async () => {
    const echo = countingTool();
    const { result, events } = await runScripted({
      answers: [answer.tool('echo', { text: 'ping' }, 0.4), answer.final('pong')],
      tools: [echo.tool],
    });
    expect(echo.calls).toEqual([{ text: 'ping' }]);
    expect(result.outcome.answer).toBe('pong');
    expect(result.envelope.tools.history).toEqual([
      {
        iteration: 1,
        tool: 'echo',
        input: { text: 'ping' },
        idempotencyKey: 'trace-1:1',
        status: 'succeeded',
        output: { echoed: { text: 'ping' } },
        durationMs: expect.any(Number),
      },
    ]);
    expect(result.envelope.observability.events.map((s) => [s.iteration, s.action, s.tool, s.confidence])).toEqual([
      [1, 'tool', 'echo', 0.4],
      [2, 'final', undefined, 0.9],
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'model.requested',
      'model.answered',
      'tool.requested',
      'tool.completed',
      'model.requested',
      'model.answered',
      'run.completed',
    ]);
  });

  it('should record a failing tool as the observation and go on', async () => {
    const broken = countingTool('echo', () => {
      throw new Error('disk on fire');
    });
    const { result } = await runScripted({
      answers: [answer.tool('echo', { text: 'x' }), answer.final('gave up politely')],
      tools: [broken.tool],
    });
    expect(result.outcome.reason).toBe('final_answer');
    const [call] = result.envelope.tools.history;
    expect(call?.status).toBe('failed');
    expect(call?.error).toMatchObject({ code: ErrorCode.TOOL_FAILED, message: 'disk on fire' });
  });

  it('should escalate with ITERATION_OVERFLOW when maxIterations pass without a final answer', async () => {
    const echo = countingTool();
    const { result, modelCalls } = await runScripted({
      answers: Array.from({ length: 5 }, () => answer.tool('echo', {})),
      agent: agentConfig({ maxIterations: 3 }),
      tools: [echo.tool],
    });
    expect(result.outcome).toMatchObject({ status: 'escalate', reason: 'iteration_limit', error: { code: ErrorCode.ITERATION_OVERFLOW } });
    expect(modelCalls).toBe(3);
    expect(echo.calls).toHaveLength(3);
  });

  it('should stop at an iteration_limit stop condition lower than maxIterations', async () => {
    const { result, modelCalls } = await runScripted({
      answers: Array.from({ length: 5 }, () => answer.tool('echo', {})),
      agent: agentConfig({ maxIterations: 5, stopConditions: [{ type: 'iteration_limit', value: 2 }] }),
    });
    expect(result.outcome.reason).toBe('iteration_limit');
    expect(result.outcome.error?.message).toContain('iteration_limit stop condition (2)');
    expect(modelCalls).toBe(2);
  });

  it('should stop as done_partial when the confidence threshold is reached after a tool call', async () => {
    const { result, modelCalls } = await runScripted({
      answers: [answer.tool('echo', {}, 0.5), answer.tool('echo', {}, 0.95), answer.final('never asked')],
      agent: agentConfig({ stopConditions: [{ type: 'confidence_threshold', value: 0.9 }] }),
    });
    expect(result.outcome).toMatchObject({ status: 'done_partial', reason: 'confidence_threshold' });
    expect(modelCalls).toBe(2);
  });

  it('should end as blocked/model_error when the model actor fails', async () => {
    const { result } = await runScripted({ answers: [] });
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'model_error', error: { code: ErrorCode.MODEL_SCRIPT_EXHAUSTED } });
  });

  it('should drop the model thought unless the agent is in debug', async () => {
    const thinking = { ...answer.tool('echo', {}), thought: 'secret plan' };
    const quiet = await runScripted({ answers: [thinking, { ...answer.final('ok'), thought: 'more secrets' }] });
    expect(JSON.stringify(quiet.events.filter((e) => e.type !== 'model.answered'))).not.toContain('secret');
    expect(JSON.stringify(quiet.result.envelope.tools)).not.toContain('secret');
    const debug = await runScripted({
      answers: [thinking, { ...answer.final('ok'), thought: 'more secrets' }],
      agent: agentConfig({ debug: true }),
    });
    expect(debug.events.find((e) => e.type === 'tool.requested')?.data).toMatchObject({ thought: 'secret plan' });
    expect(debug.events.find((e) => e.type === 'run.completed')?.data).toMatchObject({ thought: 'more secrets' });
  });

  it('should write events that match agent-event.schema.json and an envelope that matches envelope.schema.json', async () => {
    const { result, events } = await runScripted({
      answers: [answer.tool('echo', { text: 'a' }), 'not json at all'],
    });
    for (const event of events) expect(validators.agentEvent(event), JSON.stringify(validators.agentEvent.errors)).toBe(true);
    expect(validators.envelope(result.envelope), JSON.stringify(validators.envelope.errors)).toBe(true);
  });
});

describe("the three errors the editor's Errors tab always lists", () => {
  it('should reach "invalid JSON", "tool not allowed" and "iteration overflow", each in the envelope', async () => {
    const invalidJson = await runScripted({ answers: ['{"action": "tool", oops'] });
    const notAllowed = await runScripted({ answers: [answer.tool('format_disk')] });
    const overflow = await runScripted({ answers: [answer.tool('echo'), answer.tool('echo')], agent: agentConfig({ maxIterations: 2 }) });
    expect(invalidJson.result.envelope.observability.outcome?.error?.code).toBe(ErrorCode.INVALID_JSON);
    expect(notAllowed.result.envelope.observability.outcome?.error?.code).toBe(ErrorCode.TOOL_NOT_ALLOWED);
    expect(overflow.result.envelope.observability.outcome?.error?.code).toBe(ErrorCode.ITERATION_OVERFLOW);
    expect(overflow.result.outcome.status).toBe('escalate');
  });
});
