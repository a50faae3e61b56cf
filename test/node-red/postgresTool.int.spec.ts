import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEnvelope } from '../../src/contracts/schema-types.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { errorsOf, helper, loadFlow, nextMessage, withUserDir } from './nodeRedHarness.js';

const DATABASE_URL = process.env.REDFLOW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `redflow_node_red_pg_${process.pid}`;

const flow = (query: string): NodeRedNodeConfig[] => [
  { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['orders'], []] },
  {
    id: 'model',
    type: 'redflow-model',
    provider: 'scripted',
    answers: [
      { action: 'tool', tool: 'order_lookup', input: { orderId: 'A-1001' }, confidence: 0.5 },
      { action: 'final', message: 'A-1001 has shipped', confidence: 0.9 },
    ],
    wires: [],
  },
  {
    id: 'orders',
    type: 'redflow-tool-postgres',
    name: 'order_lookup',
    description: 'an order by id',
    query,
    inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } },
    readOnly: true,
    maxRows: '5',
    wires: [],
  },
  { id: 'answer', type: 'helper' },
];

describe('the postgres tool node', () => {
  let db: pg.Client;
  let userDir: string;
  let remove: () => Promise<void>;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    await db.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA};
      create table ${SCHEMA}.orders (id text primary key, status text);
      insert into ${SCHEMA}.orders values ('A-1001', 'shipped');`);
  });
  afterAll(async () => {
    await db.query(`drop schema if exists ${SCHEMA} cascade`);
    await db.end();
  });
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  it('runs its query with the connection string from the credentials store, which no log holds', async () => {
    const withPassword = DATABASE_URL.replace('postgres://postgres@', 'postgres://postgres:not-a-real-pw-8812@');
    await loadFlow(userDir, flow(`select id, status from ${SCHEMA}.orders where id = :orderId`), { orders: { connectionString: withPassword } });
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'where is A-1001?' });
    const { envelope, logPath } = (await answered).redflow as { envelope: AgentEnvelope; logPath: string };
    expect(envelope.tools.history[0]).toMatchObject({ tool: 'order_lookup', output: { rows: [{ id: 'A-1001', status: 'shipped' }], rowCount: 1 } });
    expect(await readFile(logPath, 'utf8')).not.toContain('not-a-real-pw-8812');
  });

  it('refuses a query whose :parameter its input schema does not declare, with NODE_CONFIG_INVALID', async () => {
    await loadFlow(userDir, flow(`select id from ${SCHEMA}.orders where id = :orderId and status = :status`), { orders: { connectionString: DATABASE_URL } });
    const errors = errorsOf('agent');
    helper.getNode('agent')?.receive({ payload: 'where is A-1001?' });
    await expect.poll(() => errors.join('\n')).toContain('NODE_CONFIG_INVALID');
  });
});
