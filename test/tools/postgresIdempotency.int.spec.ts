import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { runTool } from '../../src/runtime/serveActors.js';
import type { ToolContext } from '../../src/actors/tool.js';
import { createPostgresTool, type PostgresTool } from '../../src/actors/tools/postgresTool.js';
import type { ToolPostgresConfig } from '../../src/contracts/schema-types.js';
import { validateFlow } from '../../src/flows/validateFlow.js';

// tool.postgres binds :idempotency_key to the call's idempotency key, so a write can record it in
// the same statement and take effect once however often the call is made. Against a real
// PostgreSQL (trust auth, database `test`).

const DATABASE_URL = process.env.REDFLOW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `redflow_pg_idem_${randomBytes(6).toString('hex')}`;
const PAYMENTS = `${SCHEMA}.payments`;
const AMOUNT_SCHEMA = { type: 'object', required: ['amount'], properties: { amount: { type: 'number' } } };
/** The write a tool makes once: the key is the row's primary key. */
const PAY = `insert into ${PAYMENTS} (request_key, amount) values (:idempotency_key, :amount) on conflict (request_key) do nothing returning request_key`;

let admin: pg.Client;
const made: PostgresTool[] = [];

function tool(config: Partial<ToolPostgresConfig> & { query: string }): PostgresTool {
  const created = createPostgresTool({ name: 'pay', connectionString: DATABASE_URL, readOnly: false, inputSchema: AMOUNT_SCHEMA, ...config });
  made.push(created);
  return created;
}

function context(idempotencyKey: string): ToolContext {
  return { signal: new AbortController().signal, idempotencyKey, traceId: 'trace-1', iteration: Number(idempotencyKey.split(':')[1]) };
}

async function payments(): Promise<{ request_key: string; amount: string }[]> {
  return (await admin.query<{ request_key: string; amount: string }>(`select request_key, amount::text from ${PAYMENTS} order by request_key`)).rows;
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${SCHEMA}`);
  await admin.query(`create table ${PAYMENTS} (request_key text primary key, amount numeric not null)`);
});

afterEach(async () => {
  await Promise.all(made.splice(0).map((created) => created.close()));
  await admin.query(`truncate ${PAYMENTS}`);
});

afterAll(async () => {
  await admin?.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin?.end();
});

describe('tool.postgres: :idempotency_key', () => {
  it('should bind the call\'s idempotency key, so a re-sent write takes effect once', async () => {
    const pay = tool({ query: PAY });
    const first = await pay.execute({ amount: 5 }, context('trace-1:2'));
    // The same call again (a process died before its completion was logged): nothing changes.
    const again = await pay.execute({ amount: 5 }, context('trace-1:2'));
    const next = await pay.execute({ amount: 7 }, context('trace-1:3'));
    expect(first).toMatchObject({ rows: [{ request_key: 'trace-1:2' }], rowCount: 1 });
    expect(again).toMatchObject({ rows: [], rowCount: 0 });
    expect(next).toMatchObject({ rows: [{ request_key: 'trace-1:3' }], rowCount: 1 });
    expect(await payments()).toEqual([
      { request_key: 'trace-1:2', amount: '5' },
      { request_key: 'trace-1:3', amount: '7' },
    ]);
  });

  it('should take the key from the call, never from the model\'s input', async () => {
    const pay = tool({ query: PAY });
    await pay.execute({ amount: 5, idempotency_key: 'forged' }, context('trace-1:4'));
    expect(await payments()).toEqual([{ request_key: 'trace-1:4', amount: '5' }]);
  });

  it('should refuse an inputSchema that declares idempotency_key (the model would be asked for it)', () => {
    const declared = { type: 'object', properties: { amount: { type: 'number' }, idempotency_key: { type: 'string' } } };
    expect(() => tool({ query: PAY, inputSchema: declared })).toThrow(
      expect.objectContaining({ code: ErrorCode.TOOL_CONFIG_INVALID, path: '/inputSchema/properties/idempotency_key' }),
    );
  });

  it('should let a flow use :idempotency_key without declaring it in inputSchema', () => {
    const node = (query: string) => ({ id: 'pay', type: 'tool.postgres', config: { query, inputSchema: AMOUNT_SCHEMA, readOnly: false } });
    const flow = (query: string) => ({
      nodes: [
        { id: 'in', type: 'trigger.input' },
        { id: 'agent', type: 'agent.core', config: { strategy: 'react' } },
        { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [] } },
        node(query),
      ],
      edges: [
        { id: 'e1', source: 'in', target: 'agent' },
        { id: 'e2', source: 'agent', target: 'model' },
        { id: 'e3', source: 'agent', target: 'pay' },
      ],
    });
    const errors = (query: string) => {
      const validation = validateFlow(flow(query));
      return validation.ok ? [] : validation.errors.map((error) => error.code);
    };
    expect(errors(PAY)).toEqual([]);
    expect(errors(PAY.replace(':amount', ':undeclared'))).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
  });
});

describe('tool.postgres: the connection\'s password', () => {
  it('should be redacted from what the tool returns, once the tool has connected with it', async () => {
    const password = 'pg-url-password-4b7e9d';
    // Trust authentication accepts any password, so the connection works with this one.
    const withPassword = DATABASE_URL.replace('postgres://postgres@', `postgres://postgres:${password}@`);
    const echo = tool({
      connectionString: withPassword,
      readOnly: true,
      query: 'select :text::text as echoed',
      inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    });
    const request = { traceId: 'trace-1', iteration: 1, tool: 'pay', input: { text: `the password is ${password}` }, idempotencyKey: 'trace-1:1' };
    const result = await runTool(echo, request, new AbortController().signal);
    expect(result).toEqual({ ok: true, output: { rows: [{ echoed: 'the password is [redacted]' }], rowCount: 1, truncated: false, fields: ['echoed'] } });
  });
});
