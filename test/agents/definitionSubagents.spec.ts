import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { defineAgent, type AgentDefinition } from '../../src/agents/agentDefinition.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';

const child = defineAgent({
  name: 'summarizer',
  description: 'Summarizes a text.',
  promptConfig: { systemPrompt: 'You summarize.' },
  modelConfig: { provider: 'scripted', answers: [{ action: 'final', message: 'short summary', confidence: 0.9 }] },
});

function parentOf(subagents: AgentDefinition['subagents']): AgentDefinition {
  return defineAgent({
    name: 'writer',
    description: 'Writes with help.',
    promptConfig: { systemPrompt: 'You write.' },
    modelConfig: {
      provider: 'scripted',
      answers: [
        { action: 'tool', tool: 'summarizer', input: { task: 'summarize the report' }, confidence: 0.5 },
        { action: 'final', message: 'done with the summary', confidence: 0.9 },
      ],
    },
    subagents,
  });
}

describe('subagents of an agent definition', () => {
  it('run each call as a child run with its own log, linked to the caller', async () => {
    const runsDir = await mkdtemp(path.join(tmpdir(), 'def-subagents-'));
    const result = await new AgentExecutor({ runsDir }).execute(parentOf([child]), { traceId: 'parent-run' });
    expect(result.success).toBe(true);
    const { events } = await readJsonlLog(path.join(runsDir, 'parent-run-1.jsonl'));
    const started = events[0];
    expect(started?.type).toBe('run.started');
    expect(started?.type === 'run.started' && started.data.parent).toMatchObject({ traceId: 'parent-run', iteration: 1, tool: 'summarizer' });
    expect(started?.type === 'run.started' && started.data.input).toBe('summarize the report');
    const parentLog = await readJsonlLog(path.join(runsDir, 'parent-run.jsonl'));
    const call = parentLog.events.find((event) => event.type === 'tool.requested');
    expect(call?.type === 'tool.requested' && call.data.childTraceId).toBe('parent-run-1');
    const completed = parentLog.events.find((event) => event.type === 'tool.completed');
    expect(JSON.stringify(completed?.data)).toContain('short summary');
  });

  it('refuses a cycle with AGENT_REF_CYCLE before anything runs', async () => {
    const runsDir = await mkdtemp(path.join(tmpdir(), 'def-subagents-'));
    const looping: AgentDefinition[] = [];
    const parent = parentOf(looping);
    looping.push({ ...child, name: 'summarizer', subagents: [parent] });
    await expect(new AgentExecutor({ runsDir }).execute(parent)).rejects.toMatchObject({ code: 'AGENT_REF_CYCLE' });
  });
});
