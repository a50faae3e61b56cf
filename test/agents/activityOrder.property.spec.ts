import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { activityOfLog, type AgentActivityEvent } from '../../src/agents/activity.js';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { answer } from '../support/harness.js';
import { createReasoningFilter } from '../../src/actors/models/reasoningFilter.js';

// The activity of any run comes in order: every event inside its turn, turns one after another,
// each tool call started and ended in its turn, the answer's pieces before what the turn did with
// the answer, at most one error and only last; and it is the log's activity plus the live pieces.

const echo: ToolDefinition = {
  name: 'echo',
  description: 'returns its input',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
  execute: (input) => ({ echoed: input }),
};
const broken: ToolDefinition = {
  name: 'broken',
  description: 'always fails',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new Error('out of order');
  },
};

/** Answers a model might give: good ones and each kind of bad one. */
const anyAnswer = fc.oneof(
  fc.string({ maxLength: 12 }).map((text) => answer.final(`done: ${text}`)),
  fc.string({ maxLength: 5 }).map((text) => answer.tool('echo', { text }, 0.4)),
  fc.constant(answer.tool('broken', {}, 0.4)),
  fc.constant(answer.tool('echo', { text: 1 })),
  fc.constant(answer.tool('secret', {})),
  fc.constant('{"action":'),
  fc.string({ maxLength: 10 }),
  // Questions to a person (answered or not, below) and a handoff to another agent.
  fc.constant({ action: 'escalate', input: { reason: 'over my limit', question: 'May I refund it?' } }),
  fc.constant({ action: 'request_info', input: { question: 'Which order?' } }),
  fc.constant({ action: 'delegate', input: { agent_id: 'billing', task: 'refund it' } }),
);

interface Observed {
  readonly live: AgentActivityEvent[];
  readonly read: AgentActivityEvent[];
  readonly events: readonly AgentEvent[];
  readonly hasError: boolean;
  readonly turnCount: number;
}

async function observe(answers: readonly unknown[], maxTurns: number, reply: string | undefined): Promise<Observed> {
  const definition: AgentDefinition = {
    name: 'random',
    description: 'a scripted agent',
    promptConfig: { systemPrompt: 'Do the task.', query: 'go' },
    modelConfig: { provider: 'scripted', answers: [...answers] },
    runConfig: { maxTurns },
    toolConfig: { tools: [echo, broken] },
  };
  const store = createMemoryEventStore();
  const live: AgentActivityEvent[] = [];
  const run = await new AgentExecutor().start(definition, { store, onActivity: (a) => live.push(a), onQuestion: () => reply });
  const read: AgentActivityEvent[] = [];
  for await (const activity of run) read.push(activity);
  const result = await run.result;
  const { events } = await store.read(result.traceId);
  return { live, read, events, hasError: result.outcome.error !== undefined, turnCount: result.turnCount };
}

/** What an answer shows live: a final answer's message, nothing of another JSON answer, any other text less its thought. */
function textForPeople(text: string): string {
  if (!text.trimStart().startsWith('{')) {
    const filter = createReasoningFilter();
    return filter.push(text) + filter.flush();
  }
  try {
    const parsed = JSON.parse(text) as { action?: unknown; message?: unknown };
    return parsed.action === 'final' && typeof parsed.message === 'string' ? parsed.message : '';
  } catch {
    return '';
  }
}

/** Checks the order rules on one run's activity; returns each turn's pieces, joined by their last attempt. */
function checkOrder({ live, hasError }: Observed): Map<number, string> {
  let turn: number | undefined;
  let lastTurn = 0;
  let call: string | undefined;
  let callsInTurn = 0;
  let acted = false;
  const pieces = new Map<number, { attempt: number; text: string }>();
  live.forEach((activity, index) => {
    switch (activity.type) {
      case 'turn_start':
        expect(turn, 'a turn starts while another is open').toBeUndefined();
        expect(activity.turnNumber).toBeGreaterThan(lastTurn);
        turn = activity.turnNumber;
        lastTurn = turn;
        callsInTurn = 0;
        acted = false;
        break;
      case 'turn_end':
        expect(activity.turnNumber).toBe(turn);
        expect(call, 'a turn ends with a tool call open').toBeUndefined();
        turn = undefined;
        break;
      case 'content_chunk': {
        expect(activity.turnNumber).toBe(turn);
        expect(acted, "a piece of the answer after what the turn did with it").toBe(false);
        const so = pieces.get(activity.turnNumber);
        pieces.set(activity.turnNumber, so === undefined || so.attempt < activity.attempt ? { attempt: activity.attempt, text: activity.content } : { attempt: so.attempt, text: so.text + activity.content });
        break;
      }
      case 'thinking':
        expect(activity.turnNumber).toBe(turn);
        acted = true;
        break;
      case 'tool_call_start':
        expect(activity.turnNumber).toBe(turn);
        expect(call).toBeUndefined();
        callsInTurn += 1;
        expect(callsInTurn, 'two tool calls in one turn').toBe(1);
        call = activity.toolCall.id;
        acted = true;
        break;
      case 'tool_call_end':
        expect(activity.turnNumber).toBe(turn);
        expect(activity.toolCallId).toBe(call);
        call = undefined;
        break;
      case 'error':
        expect(index, 'an error that is not last').toBe(live.length - 1);
        expect(turn, 'an error inside a turn').toBeUndefined();
        break;
    }
  });
  expect(turn, 'a finished run leaves a turn open').toBeUndefined();
  expect(live.filter((a) => a.type === 'error')).toHaveLength(hasError ? 1 : 0);
  return new Map([...pieces].map(([n, p]) => [n, p.text]));
}

describe('the activity of a run (property)', () => {
  it('should come in order, as onActivity and as the run\'s iterable alike, and be the log\'s activity plus the answers as they streamed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyAnswer, { minLength: 1, maxLength: 7 }), fc.integer({ min: 1, max: 6 }), fc.option(fc.constant('yes'), { nil: undefined }), async (answers, maxTurns, reply) => {
        const observed = await observe(answers, maxTurns, reply);
        const pieces = checkOrder(observed);
        expect(observed.read).toEqual(observed.live);
        expect(observed.live.filter((a) => a.type === 'turn_start')).toHaveLength(observed.turnCount);
        expect(activityOfLog(observed.events)).toEqual(observed.live.filter((a) => a.type !== 'content_chunk'));
        // Each answer the log holds (once, whole) is what its pieces add up to: its text for people.
        // Not an answer the log withholds (text '', its verdict instead): an unparsed one with a `\u`
        // that might spell a thought, which the live filter, reading it as text, shows.
        const answered = observed.events.filter((event) => event.type === 'model.answered').filter((event) => event.data.rejection === undefined);
        expect(answered.map((event) => pieces.get(event.iteration) ?? '')).toEqual(answered.map((event) => textForPeople(event.data.text)));
      }),
      { numRuns: 120 },
    );
  });
});
