import { describe, expect, it } from 'vitest';
import { createInProcessTransport } from '../../src/actors/inProcessTransport.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { Subject } from '../../src/actors/subjects.js';
import type { ToolRequest, ToolResult } from '../../src/actors/tool.js';
import { ErrorCode } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { registerSecret } from '../../src/secrets/secrets.js';
import { agentConfig, answer } from '../support/harness.js';

// The core redacts every actor reply before the statechart sees it: a model that does not redact
// (scripted) and a tool served without runTool (a foreign worker), both echoing a secret this
// process knows. The live envelope stays the fold of the log, and neither holds the secret.

const SECRET = 'core-known-secret-7d41c2a9';

describe('actor replies carrying a secret', () => {
  it('should reach the statechart redacted, so the log and the live envelope agree and hold none', async () => {
    registerSecret(SECRET);
    const transport = createInProcessTransport();
    const actors = serveActors({
      transport,
      model: createScriptedModel([
        answer.tool('raw_echo', { n: 1 }),
        answer.tool('raw_fail', { n: 2 }),
        answer.final(`all done with ${SECRET}`),
      ]),
      tools: [],
    });
    const schema = { type: 'object' };
    // Served on the transport directly (as another process would answer), not through runTool.
    const echo = transport.serve<ToolRequest, ToolResult>(Subject.tool(actors.prefix, 'raw_echo'), () => ({
      ok: true,
      output: { note: `token ${SECRET}`, [SECRET]: [SECRET] },
    }));
    const fail = transport.serve<ToolRequest, ToolResult>(Subject.tool(actors.prefix, 'raw_fail'), () => ({
      ok: false,
      error: { code: ErrorCode.TOOL_FAILED, message: `denied for ${SECRET}`, hint: `check ${SECRET}` },
    }));
    const store = createMemoryEventStore();
    try {
      const tools = [
        { name: 'raw_echo', description: 'echoes', inputSchema: schema },
        { name: 'raw_fail', description: 'fails', inputSchema: schema },
      ];
      const result = await startRun({
        ...actors,
        tools,
        agent: agentConfig({ allowedTools: ['raw_echo', 'raw_fail'] }),
        store,
        input: 'go',
      }).result;
      const { events } = await store.read(result.traceId);
      expect(result.outcome.answer).toBe('all done with [redacted]');
      expect(JSON.stringify(events)).not.toContain(SECRET);
      expect(JSON.stringify(result.envelope)).not.toContain(SECRET);
      expect(result.envelope).toEqual(fold(events));
      const history = JSON.stringify(result.envelope.tools.history);
      expect(history).toContain('"note":"token [redacted]"');
      expect(history).toContain('denied for [redacted]');
    } finally {
      echo.unsubscribe();
      fail.unsubscribe();
      await actors.close();
    }
  });
});
