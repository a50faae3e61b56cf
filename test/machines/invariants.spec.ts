import fc from 'fast-check';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { fold } from '../../src/events/evolve.js';
import type { RecordedFact } from '../../src/events/eventTypes.js';
import { openJsonlEventStore } from '../../src/events/jsonlEventStore.js';
import { reactMachine } from '../../src/machines/reactMachine.js';
import { buildAnswerRules } from '../../src/runtime/answerRules.js';
import { createSteppingClock, systemClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { transportActorLogic, type TransportEffects } from '../../src/runtime/transportActor.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { agentConfig, answer, runScripted } from '../support/harness.js';

/** Answers a model might give: good ones, and each kind of bad one. */
const anyAnswer = fc.oneof(
  fc.constant(answer.final('done')),
  fc.record({ text: fc.string({ maxLength: 5 }) }).map(({ text }) => answer.tool('echo', { text }, 0.3)),
  fc.double({ min: 0, max: 1, noNaN: true }).map((confidence) => answer.tool('echo', {}, confidence)),
  fc.constant(answer.tool('secret', {})),
  fc.constant(answer.tool('echo', { text: 1 })),
  fc.constant(answer.tool('echo', {}, 3)),
  fc.constant('{"action":'),
  fc.constant('{"action":"think"}'),
  fc.constant({ action: 'delegate', input: { agent_id: 'other', task: 'do it' } }),
  fc.constant({ action: 'final', output: { n: 1 } }),
  fc.constant({ action: 'final', output: { m: 1 } }),
  fc.string({ maxLength: 20 }),
);

const anyAgent = fc
  .record({
    maxIterations: fc.integer({ min: 1, max: 6 }),
    threshold: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
    output: fc.constantFrom('none', 'checked', 'repaired'),
  })
  .map(({ maxIterations, threshold, limit, output }): AgentCoreReactConfig => {
    const stopConditions: NonNullable<AgentCoreReactConfig['stopConditions']> = [];
    if (threshold !== undefined) stopConditions.push({ type: 'confidence_threshold', value: threshold });
    if (limit !== undefined) stopConditions.push({ type: 'iteration_limit', value: Math.min(limit, maxIterations) });
    const schema = output === 'none' ? {} : { outputSchema: { type: 'object', required: ['n'] }, outputRepair: output === 'repaired' };
    return agentConfig({ maxIterations, stopConditions, ...schema });
  });

function recordingTools() {
  const calls: { tool: string; iteration: number }[] = [];
  const make = (name: string): ToolDefinition => ({
    name,
    description: name,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
    execute: (input, context) => {
      calls.push({ tool: name, iteration: context.iteration });
      return { ok: name, input };
    },
  });
  // `secret` is served but never allowed: no answer may make the core call it.
  return { calls, tools: [make('echo'), make('secret')] };
}

describe('the invariants of every run (docs/architecture.md)', () => {
  it('should keep the live envelope equal to the fold of the emitted facts at every step (invariant 2)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyAnswer, { maxLength: 8 }), anyAgent, async (answers, agent) => {
        const { tools } = recordingTools();
        const actors = serveActors({ model: createScriptedModel(answers), tools });
        const facts: RecordedFact[] = [];
        const mismatches: string[] = [];
        const effects: TransportEffects = {
          transport: actors.transport,
          subjects: actors.subjects,
          clock: systemClock,
          pending: () => undefined,
        };
        const actor = createActor(reactMachine.provide({ actors: { transport: transportActorLogic } }), {
          input: {
            traceId: 'prop',
            agent,
            tools: actors.tools.filter((t) => t.name === 'echo'),
            rules: buildAnswerRules(agent.allowedTools, actors.tools, undefined, agent),
            run: { input: 'q', startedAt: '2026-01-01T00:00:00.000Z' },
            effects: () => effects,
          },
        });
        actor.on('fact', ({ fact }) => facts.push(fact));
        const done = new Promise<void>((resolve) =>
          actor.subscribe((snapshot) => {
            const folded = fold(facts, 'prop');
            if (JSON.stringify(folded) !== JSON.stringify(snapshot.context.envelope)) mismatches.push(String(snapshot.value));
            expect(snapshot.context.envelope).toEqual(folded);
            if (snapshot.status === 'done') resolve();
          }),
        );
        actor.start();
        await done;
        await actors.close();
        expect(mismatches).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('should end every run within maxIterations, with one model call and at most one allowed tool call per iteration (invariant 1)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyAnswer, { maxLength: 8 }), anyAgent, async (answers, agent) => {
        const { calls, tools } = recordingTools();
        const { result, events, modelCalls } = await runScripted({ answers, agent, tools });
        expect(modelCalls).toBeLessThanOrEqual(agent.maxIterations);
        expect(result.envelope.state.iteration).toBeLessThanOrEqual(agent.maxIterations);
        expect(calls.every((c) => c.tool === 'echo')).toBe(true);
        const iterations = calls.map((c) => c.iteration);
        expect(new Set(iterations).size).toBe(iterations.length);
        expect(events.filter((e) => e.type === 'model.requested')).toHaveLength(modelCalls === 0 ? 0 : result.envelope.state.iteration);
        expect(fold(events)).toEqual(result.envelope);
        expect(['run.completed', 'run.failed']).toContain(events.at(-1)?.type);
      }),
      { numRuns: 150 },
    );
  });

  it('should write a byte-identical log for the same flow, input and answers with an injected clock and ids (invariant 3)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-inv3-'));
    try {
      const runOnce = async (file: string) => {
        const { tools } = recordingTools();
        const actors = serveActors({
          model: createScriptedModel([answer.tool('echo', { text: 'a' }), answer.tool('echo', { text: 'b' }), answer.final('ok')]),
          tools,
        });
        const store = await openJsonlEventStore(file);
        const run = startRun({
          ...actors,
          tools: actors.tools.filter((t) => t.name === 'echo'),
          agent: agentConfig(),
          store,
          input: { question: 'same' },
          traceId: 'fixed-trace',
          clock: createSteppingClock(Date.parse('2026-05-01T12:00:00.000Z'), 3),
        });
        await run.result;
        await store.close();
        await actors.close();
        return readFile(file);
      };
      const first = await runOnce(path.join(dir, 'a.jsonl'));
      const second = await runOnce(path.join(dir, 'b.jsonl'));
      expect(first.length).toBeGreaterThan(500);
      expect(second.equals(first)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
