import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';

// `redflow convert` as a user runs it (the built CLI): a flow file to Node-RED flows and back.

let dir: string;
const example = (name: string) => path.join(REPO_ROOT, 'examples', name, 'flow.json');
const nodeRedExample = path.join(REPO_ROOT, 'node-red/examples/order-status.json');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-convert-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('redflow convert', () => {
  it('converts a flow file to Node-RED flows and back to the same file (stdout, then -o)', async () => {
    const toNodeRed = await runCli(['convert', example('order-status')], { cwd: dir });
    expect(toNodeRed.code).toBe(0);
    const flows = JSON.parse(toNodeRed.stdout) as { id: string; type: string }[];
    expect(flows.map((node) => node.type)).toEqual(['tab', 'redflow-input', 'redflow-agent', 'redflow-model', 'redflow-tool-module', 'redflow-tool-module', 'redflow-memory', 'redflow-response']);
    const flowsFile = path.join(dir, 'node-red.json');
    await writeFile(flowsFile, toNodeRed.stdout);

    const back = await runCli(['convert', flowsFile, '--to', 'redflow', '-o', path.join(dir, 'back.json')], { cwd: dir });
    expect(back.code).toBe(0);
    expect(back.stderr).toContain('wrote');
    expect(JSON.parse(await readFile(path.join(dir, 'back.json'), 'utf8'))).toEqual(JSON.parse(await readFile(example('order-status'), 'utf8')));
  });

  it('converts the Node-RED example to a flow file whose flow tools run only in Node-RED, and merges it back into its flows with --into', async () => {
    const result = await runCli(['convert', nodeRedExample], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('warning FLOW_TOOL_NODE_RED_ONLY');
    const flow = JSON.parse(result.stdout) as { nodes: { type: string }[] };
    expect(flow.nodes.filter((node) => node.type === 'tool.flow')).toHaveLength(2);
    const file = path.join(dir, 'from-node-red.json');
    await writeFile(file, result.stdout);
    const validate = await runCli(['validate', file], { cwd: dir });
    expect(validate.code).toBe(65);
    expect(validate.stdout).toContain('FLOW_TOOL_NODE_RED_ONLY');

    const merged = await runCli(['convert', file, '--tab', '7f3a0c1d5e2b4a69', '--into', nodeRedExample], { cwd: dir });
    expect(merged.code).toBe(0);
    expect(JSON.parse(merged.stdout)).toEqual(JSON.parse(await readFile(nodeRedExample, 'utf8')));
  });

  it('says what is wrong with a clear code and exit code: usage 64, a missing file 66, bad input 65', async () => {
    const usage = await runCli(['convert'], { cwd: dir });
    expect(usage.code).toBe(64);
    expect((await runCli(['convert', example('graph-format'), '--to', 'yaml'], { cwd: dir })).stderr).toContain('--to takes node-red or redflow');
    const missing = await runCli(['convert', path.join(dir, 'nope.json')], { cwd: dir });
    expect(missing.code).toBe(66);

    const notJson = path.join(dir, 'broken.json');
    await writeFile(notJson, '{ "nodes": [');
    const broken = await runCli(['convert', notJson], { cwd: dir });
    expect(broken.code).toBe(65);
    expect(broken.stderr).toContain('error FLOW_INVALID_JSON');

    const wrongWay = await runCli(['convert', nodeRedExample, '--to', 'node-red'], { cwd: dir });
    expect(wrongWay.code).toBe(65);
    expect(wrongWay.stderr).toContain('error FLOW_SCHEMA_MISMATCH');

    const secret = JSON.parse(await readFile(example('postgres-orders'), 'utf8')) as { nodes: { type: string; config?: Record<string, unknown> }[] };
    const postgres = secret.nodes.find((node) => node.type === 'tool.postgres');
    if (postgres?.config) postgres.config.connectionString = 'postgres://app:hunter2@db/orders';
    const secretFile = path.join(dir, 'secret.json');
    await writeFile(secretFile, JSON.stringify(secret));
    const refused = await runCli(['convert', secretFile], { cwd: dir });
    expect(refused.code).toBe(65);
    expect(refused.stderr).toContain('error NODE_RED_SECRET_IN_FLOW');
    expect(refused.stderr).toContain('hint: set connectionStringEnv');
    expect(refused.stdout + refused.stderr).not.toContain('hunter2');

    const twoTabs = path.join(dir, 'two-tabs.json');
    const one = JSON.parse((await runCli(['convert', example('order-status')], { cwd: dir })).stdout) as unknown[];
    await writeFile(path.join(dir, 'one.json'), JSON.stringify(one));
    await writeFile(twoTabs, (await runCli(['convert', example('graph-format'), '--into', path.join(dir, 'one.json')], { cwd: dir })).stdout);
    const ambiguous = await runCli(['convert', twoTabs], { cwd: dir });
    expect(ambiguous.code).toBe(65);
    expect(ambiguous.stderr).toContain('error NODE_RED_TAB_NOT_FOUND: 2 tabs hold Redflow nodes');
    expect(ambiguous.stderr).toContain('hint: name the one to convert with --tab');
    const picked = await runCli(['convert', twoTabs, '--tab', 'agent-example'], { cwd: dir });
    expect(JSON.parse(picked.stdout)).toEqual(JSON.parse(await readFile(example('graph-format'), 'utf8')));
  });
});
