import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadSchema, SchemaFile, validators } from '../../src/contracts/schemas.js';
import { AgentEventType } from '../../src/events/eventTypes.js';
import { ErrorCode } from '../../src/errors.js';
import { answer, runScripted } from '../support/harness.js';

describe('the contracts and the TypeScript types', () => {
  it('should have src/contracts/schema-types.ts generated from the current schemas', async () => {
    // Fails (exit 1) when a schema changed without `npm run gen:types`.
    await expect(promisify(execFile)(process.execPath, ['scripts/generate-types.mjs', '--check'])).resolves.toBeDefined();
  });

  it('should list the same event types in the schema and in AgentEventType', () => {
    const schema = loadSchema(SchemaFile.agentEvent) as { properties: { type: { enum: string[] } } };
    expect([...schema.properties.type.enum].sort()).toEqual(Object.values(AgentEventType).sort());
  });

  it('should keep every error code equal to its name', () => {
    for (const [name, code] of Object.entries(ErrorCode)) expect(code).toBe(name);
  });

  it('should accept typed fixtures of every event type and reject broken ones', async () => {
    const { events, result } = await runScripted({
      answers: [answer.tool('echo', { text: 'x' }), answer.final('ok')],
      extra: { memory: undefined },
    });
    const types = new Set(events.map((e) => e.type));
    expect(types.size).toBeGreaterThanOrEqual(6);
    for (const event of events) expect(validators.agentEvent(event), JSON.stringify(validators.agentEvent.errors)).toBe(true);
    expect(validators.envelope(result.envelope)).toBe(true);
    const broken = { ...events[0], data: { input: 'x' } };
    expect(validators.agentEvent(broken)).toBe(false);
    expect(validators.envelope({ ...result.envelope, state: { iteration: -1, completed: false } })).toBe(false);
  });
});
