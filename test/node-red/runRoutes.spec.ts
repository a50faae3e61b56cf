import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { TAB, echoFlow, helper, loadFlow, nextMessage, statuses, toolThenFinal, withUserDir } from './nodeRedHarness.js';

// The admin routes Redflow's editor runs a Node-RED's agents through (redflow serve --node-red).

type EventsBody = { traceId: string; agent: string; flow: string; running: boolean; events: AgentEvent[] };

const get = async <T>(path: string, status = 200) => (await helper.request().get(path).expect(status)).body as T;
const post = async <T>(path: string, body: unknown, status: number) => (await helper.request().post(path).send(body).expect(status)).body as T;

/** Every event of the run, following it through the events route as Redflow's server does. */
async function follow(traceId: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for (;;) {
    const body = await get<EventsBody>(`/redflow/runs/${traceId}/events?after=${events.at(-1)?.seq ?? 0}&wait=5000`);
    events.push(...body.events);
    if (!body.running && body.events.length === 0) return events;
  }
}

describe('running a Node-RED agent through its admin routes', () => {
  let userDir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  it('starts a run without a message, lists it, and gives its events live and after its end; the answer leaves on the first output', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal));
    const answered = nextMessage('answer');
    const started = await post<{ traceId: string; agent: string; flow: string }>('/redflow/agents/agent/runs', { input: 'say hi', timeoutMs: 10_000 }, 201);
    expect(started).toEqual({ traceId: expect.any(String), agent: 'agent', flow: TAB });

    const events = await follow(started.traceId);
    expect(events.map((event) => event.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'tool.completed', 'model.requested', 'model.answered', 'run.completed']);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(events[0]?.data).toMatchObject({ input: 'say hi', timeoutMs: 10_000 });
    expect((await answered).payload).toBe('the echo said hi');

    const after = await get<EventsBody>(`/redflow/runs/${started.traceId}/events?after=6`);
    expect(after).toMatchObject({ agent: 'agent', flow: TAB, running: false });
    expect(after.events.map((event) => event.seq)).toEqual([7, 8]);
    const { runs } = await get<{ runs: { traceId: string; status: string; flow: string; agent: string; lastSeq: number; outcome: { status: string } }[] }>('/redflow/runs?limit=5');
    expect(runs).toEqual([expect.objectContaining({ traceId: started.traceId, status: 'finished', flow: TAB, agent: 'agent', lastSeq: 8, outcome: expect.objectContaining({ status: 'done' }) })]);
  });

  it('parks a run that waits for an approval (a yellow status), takes the approval, and refuses what the wait does not take', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal, { requiresApproval: ['echo'] }));
    const shown = statuses('agent');
    const answered = nextMessage('answer');
    const { traceId } = await post<{ traceId: string }>('/redflow/agents/agent/runs', { input: 'say hi' }, 201);
    await shown.until((text) => text.startsWith('waiting: approval'));
    const parked = await get<EventsBody>(`/redflow/runs/${traceId}/events`);
    expect(parked.running).toBe(false);
    expect(parked.events.at(-1)?.type).toBe('tool.requested');
    expect((await get<{ runs: { status: string }[] }>('/redflow/runs')).runs[0]?.status).toBe('waiting');

    const wrong = await post<{ error: { code: string } }>(`/redflow/runs/${traceId}/answer`, { kind: 'human', text: 'hello' }, 409);
    expect(wrong.error.code).toBe('RUN_NOT_WAITING');
    expect((await post<{ error: { code: string } }>(`/redflow/runs/${traceId}/answer`, { kind: 'approval', approved: 'yes' }, 400)).error.code).toBe('HTTP_BODY_INVALID');

    await post(`/redflow/runs/${traceId}/answer`, { kind: 'approval', approved: true, reason: 'fine' }, 202);
    expect((await answered).payload).toBe('the echo said hi');
    const events = await follow(traceId);
    expect(events.map((event) => event.type)).toContain('tool.approved');
    expect(events.at(-1)?.type).toBe('run.completed');
    const again = await post<{ error: { code: string } }>(`/redflow/runs/${traceId}/answer`, { kind: 'approval', approved: true }, 409);
    expect(again.error.code).toBe('RUN_ALREADY_FINISHED');
  });

  it('aborts a parked run: it ends blocked (aborted) without the call it waited on', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal, { requiresApproval: ['echo'] }));
    const shown = statuses('agent');
    const { traceId } = await post<{ traceId: string }>('/redflow/agents/agent/runs', { input: 'say hi' }, 201);
    await shown.until((text) => text.startsWith('waiting: approval'));
    expect(await post(`/redflow/runs/${traceId}/abort`, { reason: 'not today' }, 200)).toEqual({ answer: 'aborting' });
    const events = await follow(traceId);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { status: 'blocked', reason: 'aborted' } } });
    expect(events.some((event) => event.type === 'tool.completed')).toBe(false);
    expect(await post(`/redflow/runs/${traceId}/abort`, {}, 200)).toEqual({ answer: 'finished' });
  });

  it('answers a coded error for an agent that does not run, an unknown run, and a bad body or query', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal));
    expect((await post<{ error: { code: string } }>('/redflow/agents/nope/runs', { input: 'x' }, 409)).error.code).toBe('NODE_RED_AGENT_NOT_RUNNING');
    expect((await post<{ error: { code: string } }>('/redflow/agents/agent/runs', { conversationId: 'c' }, 400)).error.code).toBe('HTTP_BODY_INVALID');
    expect((await get<{ error: { code: string } }>('/redflow/runs/0123456789abcdef0123456789abcdef/events', 404)).error.code).toBe('RUN_NOT_FOUND');
    expect((await get<{ error: { code: string } }>('/redflow/runs?limit=0', 400)).error.code).toBe('HTTP_QUERY_INVALID');
  });

  it('refuses a run of an agent whose wiring is wrong with the wiring\'s code', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal, { wires: [['answer'], [], ['echo'], []] }));
    const refused = await post<{ error: { code: string; message: string } }>('/redflow/agents/agent/runs', { input: 'x' }, 422);
    expect(refused.error.code).toBe('NO_MODEL');
  });
});
