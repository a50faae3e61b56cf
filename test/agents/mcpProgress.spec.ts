import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { activityOfLog, type AgentActivityEvent } from '../../src/agents/activity.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { mcpTools } from '../../src/agents/agentTool.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createProgressPrinter } from '../../src/cli/progress.js';
import { EVERYTHING_STDIO, final, tool } from '../support/mcpFlows.js';

/** An MCP server's progress notifications for a call, as the run's activity (the real server-everything). */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-progress-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const LONG = 'trigger-long-running-operation';

describe("an MCP tool's progress notifications", () => {
  it('should each be a tool_progress activity of the call, between its start and its end, and never be logged', async () => {
    const everything = await mcpTools({ name: 'everything', ...EVERYTHING_STDIO, include: [LONG] });
    const activity: AgentActivityEvent[] = [];
    try {
      const result = await new AgentExecutor({ runsDir: dir }).execute(
        {
          name: 'waiter',
          description: 'Runs a long operation',
          promptConfig: { systemPrompt: 'You run the long operation.', query: 'Run it.' },
          modelConfig: { provider: 'scripted', answers: [tool(LONG, { duration: 1, steps: 4 }), final('finished')] },
          toolConfig: { tools: [...everything.tools] },
        },
        { onActivity: (event) => activity.push(event) },
      );
      expect(result).toMatchObject({ success: true, output: 'finished' });
    } finally {
      await everything.close();
    }
    const start = activity.findIndex((a) => a.type === 'tool_call_start');
    const end = activity.findIndex((a) => a.type === 'tool_call_end');
    const callId = (activity[start] as Extract<AgentActivityEvent, { type: 'tool_call_start' }>).toolCall.id;
    const progress = activity.filter((a) => a.type === 'tool_progress');
    // The server sends one notification per step, counted out of the steps.
    expect(progress).toEqual([1, 2, 3, 4].map((step) => ({ type: 'tool_progress', turnNumber: 1, toolCallId: callId, progress: step, total: 4 })));
    expect(activity.slice(start + 1, end)).toEqual(progress);
    // The log holds the call and its result, not the progress: the activity rebuilt from it has none.
    const [logFile] = (await import('node:fs/promises').then((fs) => fs.readdir(dir))).filter((name) => name.endsWith('.jsonl'));
    const { events } = await readJsonlLog(path.join(dir, logFile ?? ''));
    expect(activityOfLog(events).some((a) => a.type === 'tool_progress')).toBe(false);
    expect(events.map((e) => e.type)).not.toContain('tool.attached');
  }, 30_000);

  it("should show on the CLI's status line as how far the running tool is", () => {
    let written = '';
    const err = Object.assign({ write: (text: string) => ((written += text), true) }, { isTTY: true });
    const printer = createProgressPrinter({ out: { write: () => true }, err, color: false } as unknown as Parameters<typeof createProgressPrinter>[0]);
    const base = { id: 't:1', traceId: 't', time: new Date(0).toISOString() };
    printer.onEvent({ ...base, seq: 1, type: 'run.started', iteration: 0, data: { input: 'go', startedAt: base.time, agent: { strategy: 'react', maxIterations: 3, allowedTools: [LONG] }, tools: [] } } as never);
    printer.onEvent({ ...base, seq: 2, type: 'tool.requested', iteration: 1, data: { tool: LONG, input: {}, confidence: 0.5, idempotencyKey: 't:1' } } as never);
    printer.onChunk({ iteration: 1, toolCallId: 't:1', progress: { progress: 2, total: 4, message: 'halfway' } });
    expect(written).toContain(`#1  running ${LONG}: 2/4 halfway`);
    // A late report of another call shows nothing.
    written = '';
    printer.onChunk({ iteration: 1, toolCallId: 't:0', progress: { progress: 3, total: 4 } });
    expect(written).toBe('');
  });
});
