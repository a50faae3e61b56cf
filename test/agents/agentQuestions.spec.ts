import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { validators } from '../../src/contracts/schemas.js';
import { ErrorCode } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { openJsonlEventStore, readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { pendingWait } from '../../src/events/pendingWait.js';
import { systemClock, type Clock } from '../../src/runtime/clock.js';
import { RunWaitingError } from '../../src/runtime/runWaitingError.js';
import { answer } from '../support/harness.js';

// The model's questions to a person (its escalate and request_info actions) in a definition's run:
// with no onQuestion the run parks in its JSONL log like any other wait (execute rejects with
// RunWaitingError, kind 'human'), and resume with { kind: 'human', text } carries it on, in this
// process or another; past the wait's deadline it ends escalate, as a flow's run does.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-agent-questions-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const escalate = { action: 'escalate', input: { reason: 'a refund over my limit', question: 'May I refund 120 EUR?' } };
const requestInfo = { action: 'request_info', input: { question: 'Which order?', context: 'two orders match' } };

function desk(answers: readonly unknown[], waitTimeoutMs = 3_600_000): AgentDefinition {
  return {
    name: 'refund-desk',
    description: 'Refunds orders',
    promptConfig: { systemPrompt: 'You refund orders when asked.', query: 'Refund my order.' },
    modelConfig: { provider: 'scripted', answers: [...answers] },
    runConfig: { maxTurns: 4, waitTimeoutMs },
  };
}

/** What a run's result rejected with: the run parked in its log. */
async function parked(promise: Promise<unknown>): Promise<RunWaitingError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RunWaitingError);
  return error as RunWaitingError;
}

/** A clock the test moves: event times and deadlines read it, timers run on real time. */
function movableClock(start = Date.parse('2026-03-01T09:00:00Z')): Clock & { advance(ms: number): void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
    setTimeout: systemClock.setTimeout,
    clearTimeout: systemClock.clearTimeout,
  };
}

const logOf = (traceId: string) => path.join(dir, `${traceId}.jsonl`);

describe("a definition's question to a person, with no onQuestion", () => {
  it('should park the run in its log, then go on in another process with the answer the model reads next', async () => {
    const script = [escalate, answer.final('Refunded 120 EUR.')];
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk(script)));
    expect(waiting.code).toBe(ErrorCode.RUN_WAITING);
    expect(waiting.wait).toMatchObject({
      kind: 'human',
      question: { action: 'escalate', question: 'May I refund 120 EUR?', reason: 'a refund over my limit' },
      idempotencyKey: `${waiting.traceId}:1`,
      timeoutMs: 3_600_000,
    });
    expect(waiting.hint).toContain(`redflow answer ${waiting.traceId} --text <answer>`);
    // The log alone says the run waits, and for what; nothing answered it.
    const log = logOf(waiting.traceId);
    const before = (await readJsonlLog(log)).events;
    expect(before.at(-1)?.type).toBe('human.requested');
    expect(pendingWait(before)).toMatchObject({ kind: 'human', question: { question: 'May I refund 120 EUR?' } });

    const run = await new AgentExecutor({ runsDir: dir }).resume(desk(script), { logPath: log, answer: { kind: 'human', text: 'Yes, refund it.' } });
    const result = await run.result;
    expect(result).toMatchObject({ success: true, output: 'Refunded 120 EUR.', terminateReason: 'goal', turnCount: 2 });
    expect(result.messages.map((m) => m.content).join('\n')).toContain('Yes, refund it.');
    const { events } = await readJsonlLog(log);
    expect(events.find((e) => e.type === 'human.answered')?.data).toEqual({ key: waiting.wait.idempotencyKey, answer: 'Yes, refund it.' });
    for (const event of events) expect(validators.agentEvent(event), JSON.stringify(validators.agentEvent.errors)).toBe(true);
    expect(fold(events)).toEqual(result.envelope);
  });

  it('should park a request_info the same way, and again at each question', async () => {
    const script = [requestInfo, escalate, answer.final('Refunded order A-7.')];
    const executor = new AgentExecutor({ runsDir: dir });
    const first = await parked(executor.execute(desk(script)));
    expect(first.wait.question).toEqual({ action: 'request_info', question: 'Which order?', context: 'two orders match' });
    const log = logOf(first.traceId);
    const second = await parked((await executor.resume(desk(script), { logPath: log, answer: { kind: 'human', text: 'A-7' } })).result);
    expect(second.wait).toMatchObject({ kind: 'human', iteration: 2, question: { action: 'escalate' } });
    const result = await (await executor.resume(desk(script), { logPath: log, answer: { kind: 'human', text: 'yes', idempotencyKey: second.wait.idempotencyKey } })).result;
    expect(result).toMatchObject({ success: true, output: 'Refunded order A-7.', turnCount: 3 });
    const { events } = await readJsonlLog(log);
    expect(events.filter((e) => e.type === 'human.answered').map((e) => (e.data as { answer: string }).answer)).toEqual(['A-7', 'yes']);
  });

  it('should refuse an answer that does not fit the wait with its code, recording nothing', async () => {
    const script = [requestInfo, escalate, answer.final('done')];
    const executor = new AgentExecutor({ runsDir: dir });
    const first = await parked(executor.execute(desk(script)));
    const log = logOf(first.traceId);
    const refusedWith = async (given: Parameters<AgentExecutor['resume']>[1]['answer'], code: string) => {
      const bytes = await readFile(log, 'utf8');
      await expect(executor.resume(desk(script), { logPath: log, ...(given !== undefined && { answer: given }) })).rejects.toMatchObject({ code });
      expect(await readFile(log, 'utf8')).toBe(bytes);
    };
    // Another kind of answer, or one naming another question.
    await refusedWith({ kind: 'approval', approved: true }, ErrorCode.RUN_NOT_WAITING);
    await refusedWith({ kind: 'client', result: { ok: true, output: 'A-7' } }, ErrorCode.RUN_NOT_WAITING);
    await refusedWith({ kind: 'human', text: 'A-7', idempotencyKey: `${first.traceId}:9` }, ErrorCode.WAIT_ANSWER_MISMATCH);
    await refusedWith({ kind: 'human', text: 'A-7', iteration: 2 }, ErrorCode.WAIT_ANSWER_MISMATCH);

    const second = await parked((await executor.resume(desk(script), { logPath: log, answer: { kind: 'human', text: 'A-7' } })).result);
    // The first question's answer, given again: it was taken once.
    await refusedWith({ kind: 'human', text: 'A-7 again', idempotencyKey: first.wait.idempotencyKey }, ErrorCode.WAIT_ALREADY_ANSWERED);
    await (await executor.resume(desk(script), { logPath: log, answer: { kind: 'human', text: 'yes', idempotencyKey: second.wait.idempotencyKey } })).result;
    // The run has ended: any answer is refused.
    await refusedWith({ kind: 'human', text: 'yes' }, ErrorCode.RUN_ALREADY_FINISHED);
  });

  it('should refuse an answer with WAIT_ALREADY_ANSWERED while another writer holds the log, and leave the log as it was', async () => {
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk([escalate, answer.final('never')])));
    const log = logOf(waiting.traceId);
    const bytes = await readFile(log, 'utf8');
    // The holder took the run first (it answers the wait, or runs the run on).
    const holder = await openJsonlEventStore(log);
    try {
      const resumed = new AgentExecutor({ runsDir: dir }).resume(desk([answer.final('yes')]), { logPath: log, answer: { kind: 'human', text: 'yes' } });
      await expect(resumed).rejects.toMatchObject({ code: ErrorCode.WAIT_ALREADY_ANSWERED });
      // Without an answer there is no race to lose: the writer is named as it is.
      await expect(new AgentExecutor({ runsDir: dir }).resume(desk([]), { logPath: log })).rejects.toMatchObject({ code: ErrorCode.LOG_CONCURRENT_WRITER });
    } finally {
      await holder.close();
    }
    expect(await readFile(log, 'utf8')).toBe(bytes);
  });

  it('should stay parked, recording nothing, when resumed without an answer before its deadline', async () => {
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk([escalate, answer.final('never')])));
    const log = logOf(waiting.traceId);
    const bytes = await readFile(log, 'utf8');
    const again = await parked((await new AgentExecutor({ runsDir: dir }).resume(desk([escalate]), { logPath: log })).result);
    expect(again.wait).toEqual(waiting.wait);
    expect(await readFile(log, 'utf8')).toBe(bytes);
  });

  it('should end escalate with the question (HUMAN_ANSWER_MISSING) once past runConfig.waitTimeoutMs, an answer or not', async () => {
    for (const [ask, reason] of [
      [escalate, 'escalated'],
      [requestInfo, 'info_requested'],
    ] as const) {
      for (const late of [undefined, { kind: 'human', text: 'too late' } as const]) {
        const clock = movableClock();
        const executor = new AgentExecutor({ runsDir: dir, clock });
        const waiting = await parked(executor.execute(desk([ask, answer.final('never')], 60_000)));
        expect(Date.parse(waiting.wait.deadline) - Date.parse(waiting.wait.since)).toBe(60_000);
        clock.advance(60_000);
        const result = await (await executor.resume(desk([ask]), { logPath: logOf(waiting.traceId), ...(late !== undefined && { answer: late }) })).result;
        expect(result).toMatchObject({
          success: false,
          terminateReason: reason,
          errorInfo: { code: ErrorCode.HUMAN_ANSWER_MISSING },
          outcome: { status: 'escalate', reason, question: { action: ask.action, question: ask.input.question } },
        });
        const { events } = await readJsonlLog(logOf(waiting.traceId));
        // The late answer is not what the model got: no person answered in time.
        expect(events.map((e) => e.type)).not.toContain('human.answered');
        expect(fold(events)).toEqual(result.envelope);
      }
    }
  });
});

describe('onQuestion, for those who pass it', () => {
  it('should answer a question the run parked on when it is resumed without an answer', async () => {
    const script = [escalate, answer.final('Refunded.')];
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk(script)));
    const asked: unknown[] = [];
    const run = await new AgentExecutor({ runsDir: dir }).resume(desk(script), {
      logPath: logOf(waiting.traceId),
      onQuestion: (question) => {
        asked.push(question);
        return 'Yes.';
      },
    });
    expect(await run.result).toMatchObject({ success: true, output: 'Refunded.' });
    expect(asked).toEqual([waiting.wait.question]);
  });

  it('should end the run escalate at once when it returns undefined, as a host that cannot hold a run does', async () => {
    const result = await new AgentExecutor({ runsDir: dir }).execute(desk([escalate, answer.final('never')]), { onQuestion: () => undefined });
    expect(result).toMatchObject({ success: false, terminateReason: 'escalated', errorInfo: { code: ErrorCode.HUMAN_ANSWER_MISSING }, turnCount: 1 });
  });
});

describe('the answer a person gives', () => {
  it('should be recorded as given and be what the model reads next, whatever its text', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 120, unit: 'grapheme' }).filter((text) => text.trim() !== ''),
        async (text) => {
          const store = createMemoryEventStore();
          const executor = new AgentExecutor();
          const script = [requestInfo, answer.final('ok')];
          const waiting = await parked(executor.execute(desk(script), { store }));
          const result = await (await executor.resume(desk(script), { store, traceId: waiting.traceId, answer: { kind: 'human', text } })).result;
          expect(result.success).toBe(true);
          const { events } = await store.read(waiting.traceId);
          expect(events.find((e) => e.type === 'human.answered')?.data).toEqual({ key: waiting.wait.idempotencyKey, answer: text });
          // The model's next call was sent the answer, word for word, as a person's.
          const observation = result.messages.map((m) => m.content).find((content) => content.includes('Answer from a person'));
          expect(observation).toContain(text);
        },
      ),
      { numRuns: 25 },
    );
  });
});
