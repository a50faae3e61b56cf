import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { ToolContext } from '../../src/actors/tool.js';
import { createPostgresTool, type PostgresTool } from '../../src/actors/tools/postgresTool.js';
import type { ToolPostgresConfig } from '../../src/contracts/schema-types.js';
import { loadFlowFile } from '../../src/flows/loadFlow.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { thrown } from '../support/thrown.js';

/** The test database (trust auth): CI and the developers' machines run one on 127.0.0.1. */
const DATABASE_URL = process.env.REDFLOW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** A schema of this test file's own, dropped at the end. */
const SCHEMA = `redflow_pg_${randomBytes(6).toString('hex')}`;
const ORDERS = `${SCHEMA}.orders`;
/** A connection string whose connections use SCHEMA first: the current schema of a session, as psql would have one. */
const SCHEMA_URL = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${SCHEMA}`)}`;

const ORDER_ID_SCHEMA = {
  type: 'object',
  required: ['orderId'],
  properties: { orderId: { type: 'string' } },
} as const;

let admin: pg.Client;
const tools: PostgresTool[] = [];

function tool(config: Partial<ToolPostgresConfig> & { query: string }): PostgresTool {
  const made = createPostgresTool({
    name: 'orders',
    connectionString: DATABASE_URL,
    inputSchema: { type: 'object', properties: {} },
    ...config,
  });
  tools.push(made);
  return made;
}

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, idempotencyKey: 'key-1', traceId: 'trace-1', iteration: 1 };
}

async function failure(work: Promise<unknown>): Promise<RedflowError> {
  const thrown = await work.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(RedflowError);
  return thrown as RedflowError;
}

async function orderCount(): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from ${ORDERS}`);
  return rows[0]!.n;
}

/** Queries of `application_name` still running on the server. */
async function activeQueries(applicationName: string): Promise<string[]> {
  const { rows } = await admin.query<{ query: string }>(
    "select query from pg_stat_activity where application_name = $1 and state = 'active' and pid <> pg_backend_pid()",
    [applicationName],
  );
  return rows.map((row) => row.query);
}

async function eventually(check: () => Promise<boolean>, ms = 2_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${SCHEMA}`);
  await admin.query(`create table ${ORDERS} (id text primary key, status text not null, total numeric(10, 2) not null)`);
  await admin.query(`insert into ${ORDERS} values ('A-1', 'shipped', 10.50), ('A-2', 'processing', 3.00), ('A-3', 'delivered', 99.99)`);
  await admin.query(`create table ${SCHEMA}.notes (id serial primary key, body text not null)`);
});

afterEach(async () => {
  await Promise.all(tools.splice(0).map((made) => made.close()));
});

afterAll(async () => {
  await admin?.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin?.end();
});

describe('tool.postgres: parameters', () => {
  it('should bind named parameters from the input', async () => {
    const lookup = tool({
      query: `select id, status from ${ORDERS} where id = :orderId or (id = :orderId and status = :status)`,
      inputSchema: { type: 'object', properties: { orderId: { type: 'string' }, status: { type: 'string' } } },
    });
    expect(await lookup.execute({ orderId: 'A-2', status: 'x' }, context())).toEqual({
      rows: [{ id: 'A-2', status: 'processing' }],
      rowCount: 1,
      truncated: false,
      fields: ['id', 'status'],
    });
  });

  it('should send a value as data: an injection attempt finds nothing and drops nothing', async () => {
    const lookup = tool({ query: `select id from ${ORDERS} where id = :orderId`, inputSchema: ORDER_ID_SCHEMA });
    const output = await lookup.execute({ orderId: `x'; drop table ${ORDERS}; --` }, context());
    expect(output).toMatchObject({ rows: [], rowCount: 0, truncated: false, fields: ['id'] });
    expect(await orderCount()).toBe(3);
  });

  it('should not take names in literals, identifiers, comments or casts for parameters', async () => {
    const lookup = tool({
      query: [
        `select ':notParam' as lit, E'\\':alsoNot' as esc, $$ :dollar $$ as dq, 1 as ":quoted",`,
        '  total::text as total, :orderId::text as given -- :inComment',
        `from ${ORDERS} /* :inBlock */ where id = :orderId;`,
      ].join('\n'),
      inputSchema: ORDER_ID_SCHEMA,
    });
    expect(await lookup.execute({ orderId: 'A-1' }, context())).toMatchObject({
      rows: [{ lit: ':notParam', esc: "':alsoNot", dq: ' :dollar ', ':quoted': 1, total: '10.50', given: 'A-1' }],
    });
  });

  it('should fail with TOOL_INPUT_INVALID when a parameter is missing from the input, before connecting', async () => {
    const lookup = tool({
      query: `select id from ${ORDERS} where id = :orderId`,
      inputSchema: ORDER_ID_SCHEMA,
      connectionString: 'postgres://nobody@127.0.0.1:1/none',
    });
    const error = await failure(Promise.resolve().then(() => lookup.execute({ other: 'A-1' }, context())));
    expect(error.toInfo()).toMatchObject({ code: ErrorCode.TOOL_INPUT_INVALID, path: '/orderId' });
    expect(error.message).toContain(':orderId');
  });

  it('should pass null as SQL NULL', async () => {
    const lookup = tool({
      query: 'select :value::text is null as missing',
      inputSchema: { type: 'object', properties: { value: { type: ['string', 'null'] } } },
    });
    expect((await lookup.execute({ value: null }, context())).rows).toEqual([{ missing: true }]);
  });
});

describe('tool.postgres: configuration', () => {
  it.each([
    [{ query: 'select 1', inputSchema: undefined }, '/inputSchema'],
    [{ query: 'select :a, :b', inputSchema: { type: 'object', properties: { a: {} } } }, '/inputSchema'],
    [{ query: 'select 1; select 2' }, '/query'],
    [{ query: "select 'open" }, '/query'],
    [{ query: 'select $1' }, '/query'],
    [{ query: 'select 1', maxRows: 0 }, '/maxRows'],
    [{ query: 'select 1', name: 'no spaces' }, '/name'],
  ])('should refuse %j with TOOL_CONFIG_INVALID', (config, where) => {
    const make = () => tool(config as unknown as ToolPostgresConfig);
    const error = thrown(make);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).toInfo()).toMatchObject({ code: ErrorCode.TOOL_CONFIG_INVALID, path: where });
  });

  it('should read the connection string from DATABASE_URL, or the variable connectionStringEnv names, at the first call', async () => {
    const fromDefault = createPostgresTool(
      { name: 'env_default', query: 'select 1 as one', inputSchema: { type: 'object' } },
      { env: { DATABASE_URL } },
    );
    const fromNamed = createPostgresTool(
      { name: 'env_named', query: 'select 2 as two', inputSchema: { type: 'object' }, connectionStringEnv: 'ORDERS_DB' },
      { env: { ORDERS_DB: DATABASE_URL } },
    );
    const unset = createPostgresTool(
      { name: 'env_unset', query: 'select 1', inputSchema: { type: 'object' }, connectionStringEnv: 'NOT_SET_ANYWHERE' },
      { env: {} },
    );
    tools.push(fromDefault, fromNamed, unset);
    expect((await fromDefault.execute({}, context())).rows).toEqual([{ one: 1 }]);
    expect((await fromNamed.execute({}, context())).rows).toEqual([{ two: 2 }]);
    const error = await failure(unset.execute({}, context()));
    expect(error.code).toBe(ErrorCode.TOOL_CONFIG_INVALID);
    expect(error.message).toContain('NOT_SET_ANYWHERE');
    const notUrl = createPostgresTool(
      { name: 'env_not_url', query: 'select 1', inputSchema: { type: 'object' } },
      { env: { DATABASE_URL: 'host=db password=kw-secret' } },
    );
    tools.push(notUrl);
    const refused = await failure(notUrl.execute({}, context()));
    expect(refused.code).toBe(ErrorCode.TOOL_CONFIG_INVALID);
    expect(refused.message).toContain('not a postgres:// URL');
    expect(JSON.stringify(refused.toInfo())).not.toContain('kw-secret');
  });

  it('should use a given pool and leave it open on close()', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      const given = createPostgresTool({ name: 'pooled', query: 'select 3 as three', inputSchema: { type: 'object' } }, { pool });
      expect((await given.execute({}, context())).rows).toEqual([{ three: 3 }]);
      await given.close();
      expect((await pool.query('select 1 as still')).rows).toEqual([{ still: 1 }]);
      expect(await failure(given.execute({}, context()))).toMatchObject({ code: ErrorCode.TOOL_FAILED });
    } finally {
      await pool.end();
    }
  });
});

describe('tool.postgres: read-only', () => {
  it.each([
    ['INSERT', `insert into ${ORDERS} values ('B-1', 'new', 1)`],
    ['UPDATE', `update ${ORDERS} set status = 'lost'`],
    ['DELETE', `delete from ${ORDERS}`],
    ['DDL', `drop table ${ORDERS}`],
    ['a writing CTE', `with gone as (delete from ${ORDERS} returning id) select * from gone`],
    ['a sequence', `select nextval('${SCHEMA}.notes_id_seq')`],
  ])('should refuse %s with the database error as TOOL_FAILED', async (_what, query) => {
    const writer = tool({ query });
    const error = await failure(writer.execute({}, context()));
    expect(error.code).toBe(ErrorCode.TOOL_FAILED);
    expect(error.message).toMatch(/read-only transaction \(SQLSTATE 25006\)|data-modifying statements/);
    expect(error.hint).toContain('"readOnly": false');
    expect(await orderCount()).toBe(3);
    const { rows } = await admin.query(`select status from ${ORDERS} where id = 'A-1'`);
    expect(rows).toEqual([{ status: 'shipped' }]);
  });

  it('should declare itself idempotent when read-only (its repeat changes nothing), and not when it writes', () => {
    expect(tool({ query: `select 1` }).idempotent).toBe(true);
    expect(tool({ query: `insert into ${SCHEMA}.notes (body) values ('x')`, readOnly: false }).idempotent).toBe(false);
  });

  it('should write and commit with readOnly: false, and report the affected rows', async () => {
    const writer = tool({
      query: `insert into ${SCHEMA}.notes (body) values (:body)`,
      inputSchema: { type: 'object', required: ['body'], properties: { body: { type: 'string' } } },
      readOnly: false,
    });
    expect(await writer.execute({ body: 'hello' }, context())).toEqual({ rows: [], rowCount: 1, truncated: false, fields: [] });
    const { rows } = await admin.query(`select body from ${SCHEMA}.notes`);
    expect(rows).toEqual([{ body: 'hello' }]);
  });

  it('should roll back a write that fails', async () => {
    const writer = tool({ query: `insert into ${SCHEMA}.notes (body) values ('x'), (null)`, readOnly: false });
    expect(await failure(writer.execute({}, context()))).toMatchObject({ code: ErrorCode.TOOL_FAILED });
    const { rows } = await admin.query(`select count(*)::int as n from ${SCHEMA}.notes where body = 'x'`);
    expect(rows).toEqual([{ n: 0 }]);
  });
});

describe('tool.postgres: rows and types', () => {
  it('should return at most maxRows rows and say when there were more', async () => {
    const series = (maxRows: number) => tool({ query: 'select g from generate_series(1, 10) g', maxRows });
    expect(await series(3).execute({}, context())).toEqual({
      rows: [{ g: 1 }, { g: 2 }, { g: 3 }],
      rowCount: 3,
      truncated: true,
      fields: ['g'],
    });
    expect(await series(10).execute({}, context())).toMatchObject({ rowCount: 10, truncated: false });
  });

  it('should cut the rows of a statement that cannot use a cursor (INSERT … RETURNING) too', async () => {
    const writer = tool({
      query: `insert into ${SCHEMA}.notes (body) select 'n' || g from generate_series(1, 5) g returning body`,
      readOnly: false,
      maxRows: 2,
    });
    expect(await writer.execute({}, context())).toEqual({
      rows: [{ body: 'n1' }, { body: 'n2' }],
      rowCount: 2,
      truncated: true,
      fields: ['body'],
    });
  });

  it('should turn every value into plain JSON', async () => {
    const types = tool({
      query: `select 9007199254740993::bigint as big, 12345678901234567890.123456789::numeric as num,
        timestamptz '2024-05-01 10:00:00.123+02' as ts, timestamp '2024-05-01 10:00:00' as local,
        date '2024-05-01' as day, '\\xdeadbeef'::bytea as bin, '{"a": [1, {"b": null}], "__proto__": 1}'::jsonb as doc,
        null::text as nothing, 1.5::float8 as float, 'NaN'::float8 as nan, true as yes, 42::int4 as int,
        interval '1 day 2 hours' as span, array[1, 2]::int8[] as bigs, array[date '2024-01-02', null] as days,
        'infinity'::timestamptz as forever, array[[timestamptz '2024-01-01 00:00+00'], [null::timestamptz]] as stamps`,
    });
    const output = await types.execute({}, context());
    const row = output.rows[0]!;
    expect(row).toEqual({
      big: '9007199254740993',
      num: '12345678901234567890.123456789',
      ts: '2024-05-01T08:00:00.123Z',
      local: '2024-05-01T10:00:00',
      day: '2024-05-01',
      bin: Buffer.from([0xde, 0xad, 0xbe, 0xef]).toString('base64'),
      doc: JSON.parse('{"a": [1, {"b": null}], "__proto__": 1}') as unknown,
      nothing: null,
      float: 1.5,
      nan: 'NaN',
      yes: true,
      int: 42,
      span: 'P0Y0M1DT2H0M0S',
      bigs: ['1', '2'],
      days: ['2024-01-02', null],
      forever: 'infinity',
      stamps: [['2024-01-01T00:00:00.000Z'], [null]],
    });
    expect(Object.hasOwn(row.doc as object, '__proto__')).toBe(true);
    expect(JSON.parse(JSON.stringify(output))).toEqual(output);
  });
});

describe('tool.postgres: time and cancellation', () => {
  it('should end a slow statement with TOOL_TIMEOUT at about timeoutMs', async () => {
    const sleepy = tool({ query: 'select pg_sleep(5)', timeoutMs: 300 });
    const started = Date.now();
    const error = await failure(sleepy.execute({}, context()));
    expect(error.toInfo()).toMatchObject({ code: ErrorCode.TOOL_TIMEOUT, retryable: true });
    // Well before the statement's 5 s: the timeout ended it (generous: PostgreSQL shares the machine's cores).
    expect(Date.now() - started).toBeLessThan(4_000);
    // The connection is clean again: the next call works.
    const quick = tool({ query: 'select 1 as one', timeoutMs: 300 });
    expect((await quick.execute({}, context())).rows).toEqual([{ one: 1 }]);
  });

  it('should stop waiting when the run is aborted, and cancel the query on the server', async () => {
    const sleepy = tool({ name: 'abortable', query: 'select pg_sleep(5)', timeoutMs: 5_000 });
    const controller = new AbortController();
    const call = failure(sleepy.execute({}, context(controller.signal)));
    expect(await eventually(async () => (await activeQueries('redflow:abortable')).length === 1)).toBe(true);
    const abortedAt = Date.now();
    controller.abort();
    const error = await call;
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    // The call stopped waiting well before the statement's 5 s (generous: the database shares the cores).
    expect(Date.now() - abortedAt).toBeLessThan(2_000);
    // Cancelled on the server, not left running until its statement_timeout (5 s).
    expect(await eventually(async () => (await activeQueries('redflow:abortable')).length === 0)).toBe(true);
    await sleepy.close();
    expect(Date.now() - abortedAt).toBeLessThan(4_500);
  });

  it('should refuse a call whose signal is already aborted', async () => {
    const quick = tool({ query: 'select 1' });
    const controller = new AbortController();
    controller.abort();
    expect(await failure(quick.execute({}, context(controller.signal)))).toMatchObject({ code: ErrorCode.RUN_ABORTED });
  });
});

describe('tool.postgres: connection failures', () => {
  it('should fail with TOOL_FAILED and a hint, never showing the connection string or password', async () => {
    const password = 'Sup3r-Secret-pw';
    const connectionString = `postgres://someone:${password}@127.0.0.1:1/test`;
    const wrongPort = tool({ query: 'select 1', connectionString, timeoutMs: 2_000 });
    const error = await failure(wrongPort.execute({}, context()));
    expect(error.code).toBe(ErrorCode.TOOL_FAILED);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('cannot connect to PostgreSQL');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.hint).toContain('connectionString');
    const shown = JSON.stringify(error.toInfo());
    expect(shown).not.toContain(password);
    expect(shown).not.toContain(connectionString);
  });

  it('should not show the password when the server refuses it either', async () => {
    const fromEnv = createPostgresTool(
      { name: 'bad_db', query: 'select 1', inputSchema: { type: 'object' } },
      { env: { DATABASE_URL: 'postgres://postgres:pw-in-url@127.0.0.1:5432/redflow_no_such_database' } },
    );
    tools.push(fromEnv);
    const error = await failure(fromEnv.execute({}, context()));
    expect(error.code).toBe(ErrorCode.TOOL_FAILED);
    expect(error.message).toContain('redflow_no_such_database');
    expect(error.hint).toContain('DATABASE_URL');
    expect(JSON.stringify(error.toInfo())).not.toContain('pw-in-url');
  });
});

describe('a flow with a tool.postgres node (examples/postgres-orders)', () => {
  /** The example's own schema: its seed makes it, its flow names it. */
  const EXAMPLE_SCHEMA = 'redflow_example';
  /** Held while the example's schema is seeded and used: test runs sharing the database take turns. */
  let exampleLock: pg.Client;

  beforeAll(async () => {
    exampleLock = new pg.Client({ connectionString: DATABASE_URL });
    await exampleLock.connect();
    await exampleLock.query('select pg_advisory_lock(hashtext($1))', [EXAMPLE_SCHEMA]);
    // The seed runs with this file's schema first on its search path, as psql would with any
    // current schema: it must leave that schema's own orders table alone.
    const seeder = new pg.Client({ connectionString: SCHEMA_URL });
    await seeder.connect();
    try {
      await seeder.query(await readFile(path.join(REPO, 'examples/postgres-orders/seed.sql'), 'utf8'));
    } finally {
      await seeder.end();
    }
  });

  afterAll(async () => {
    await exampleLock?.query(`drop schema if exists ${EXAMPLE_SCHEMA} cascade`);
    await exampleLock?.end();
  });

  it("should seed its own schema only, leaving the database's other orders tables as they were", async () => {
    const { rows: ours } = await admin.query<{ id: string }>(`select id from ${ORDERS} order by id`);
    expect(ours.map((row) => row.id)).toEqual(['A-1', 'A-2', 'A-3']);
    const { rows: example } = await admin.query<{ id: string }>(`select id from ${EXAMPLE_SCHEMA}.orders order by id`);
    expect(example.map((row) => row.id)).toEqual(['A-1001', 'A-1002', 'A-1003']);
  });

  it('should validate, and run end to end with the query result in tools.history', async () => {
    const flowPath = path.join(REPO, 'examples/postgres-orders/flow.json');
    const loaded = await loadFlowFile(flowPath);
    expect(loaded.validation.ok && loaded.validation.warnings).toEqual([]);

    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-pg-flow-'));
    try {
      const run = await runFlowFile({
        flowPath,
        input: 'Where is order A-1001?',
        logPath: path.join(dir, 'run.jsonl'),
        // No search path: the flow names its schema.
        env: { DATABASE_URL },
        fsync: 'never',
      });
      const { outcome, envelope } = await run.finished();
      expect(outcome).toMatchObject({ status: 'done', reason: 'final_answer' });
      expect(envelope.tools.history).toEqual([
        expect.objectContaining({
          tool: 'order_lookup',
          input: { orderId: 'A-1001' },
          status: 'succeeded',
          output: {
            rows: [{ id: 'A-1001', status: 'shipped', total: '42.50', updated_at: '2024-05-01T10:00:00.000Z' }],
            rowCount: 1,
            truncated: false,
            fields: ['id', 'status', 'total', 'updated_at'],
          },
        }),
      ]);
      // finished() closed the tool's pool: its connections go away.
      const connections = async (): Promise<number> => {
        const { rows } = await admin.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where application_name = 'redflow:order_lookup'",
        );
        return rows[0]!.n;
      };
      expect(await eventually(async () => (await connections()) === 0)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
