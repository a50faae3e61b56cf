// Properties of diffRuns over real runs of random scripts (tool calls and final answers, scripted
// model, real tools in embedded mode): a run never differs from itself, and two runs' first
// difference is found at the same place whichever run comes first.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { diffRuns } from '../../src/machines/runDiff.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';

const echo = countingTool('echo').tool;

/** A script: a few tool calls (of a small set of inputs, so runs often agree for a while), maybe a final answer. */
const scripts = fc
  .tuple(fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }), fc.option(fc.constantFrom('yes', 'no'), { nil: undefined }))
  .map(([calls, final]) => [...calls.map((text) => answer.tool('echo', { text })), ...(final === undefined ? [] : [answer.final(final)])]);

const cache = new Map<string, Promise<AgentEvent[]>>();
/** The log of a run of `script` (each script runs once: a run is deterministic with the stepping clock). */
function logOf(script: readonly unknown[]): Promise<AgentEvent[]> {
  const key = JSON.stringify(script);
  let events = cache.get(key);
  if (events === undefined) {
    // Three iterations at most: a script of three calls and no final answer ends at the limit.
    events = runScripted({ answers: script, tools: [echo], agent: agentConfig({ maxIterations: 3 }) }).then(({ events: logged }) => logged);
    cache.set(key, events);
  }
  return events;
}

describe('diffRuns (properties)', () => {
  it('should find no difference between a run and itself', async () => {
    await fc.assert(
      fc.asyncProperty(scripts, async (script) => {
        const events = await logOf(script);
        const diff = diffRuns(events, events);
        expect(diff.same).toBe(true);
        expect(diff.first).toBeNull();
        expect(diff.iterations.every((it) => it.differences.length === 0)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('should find the first difference at the same iteration and field whichever run comes first, the values swapped', async () => {
    await fc.assert(
      fc.asyncProperty(scripts, scripts, async (x, y) => {
        const [a, b] = await Promise.all([logOf(x), logOf(y)]);
        const forward = diffRuns(a, b);
        const backward = diffRuns(b, a);
        expect(backward.same).toBe(forward.same);
        expect(backward.first).toEqual(forward.first === null ? null : { ...forward.first, a: forward.first.b, b: forward.first.a });
        // Runs of different scripts differ somewhere, runs of the same script nowhere (an answer
        // after the third is never asked for).
        expect(forward.same).toBe(JSON.stringify(x.slice(0, 3)) === JSON.stringify(y.slice(0, 3)));
      }),
      { numRuns: 60 },
    );
  });
});
