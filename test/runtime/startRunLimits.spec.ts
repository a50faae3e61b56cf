import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/host/admission.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

describe('startRun, called as a library', () => {
  it('should refuse an input nested 10,000 deep with RUN_INPUT_TOO_DEEP and record nothing', async () => {
    let deep: unknown = [];
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const actors = serveActors({ model: createScriptedModel([answer.final('ok')]), tools: [countingTool().tool] });
    const store = createMemoryEventStore();
    try {
      expect(() => startRun({ ...actors, agent: agentConfig(), store, input: deep, traceId: 'deep' })).toThrow(
        expect.objectContaining({ code: ErrorCode.RUN_INPUT_TOO_DEEP }),
      );
      await expect(store.read('deep')).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
    } finally {
      await actors.close();
    }
  });
});
