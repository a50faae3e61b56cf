import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { MAX_SUBAGENT_DEPTH, checkAgentRefs, validateFlowTree } from '../../src/flows/agentRefs.js';
import { flowFileRoots } from '../../src/files/fileRoots.js';
import { FlowInvalidError, loadValidFlow } from '../../src/flows/loadValidFlow.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { planRun } from '../../src/runtime/runPlan.js';
import { allowedToolSpecs, buildTools } from '../../src/runtime/buildTools.js';

/** A flow whose agent has the subagents `refs` (name → flow file, as written). */
function flowWith(refs: Record<string, string> = {}) {
  const names = Object.keys(refs);
  return {
    nodes: [
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'ok', confidence: 1 }] } },
      ...names.map((name) => ({ id: name, type: 'agent.ref', config: { flow: refs[name] } })),
      // A flow needs a tool: a subagent is one; a leaf flow gets a client tool.
      ...(names.length === 0 ? [{ id: 'ask', type: 'tool.client', config: { inputSchema: { type: 'object' } } }] : []),
    ],
    edges: [
      { id: 'e-model', source: 'agent', target: 'model' },
      ...(names.length === 0 ? [{ id: 'e-ask', source: 'agent', target: 'ask' }] : names.map((name) => ({ id: `e-${name}`, source: 'agent', target: name }))),
    ],
  };
}

let dir: string;

async function write(file: string, flow: unknown): Promise<string> {
  const full = path.join(dir, file);
  await mkdir(path.dirname(full), { recursive: true });
  await writeFile(full, typeof flow === 'string' ? flow : JSON.stringify(flow));
  return full;
}

/** The codes `loadValidFlow` refuses `file` with (none when it loads). */
async function refusal(file: string): Promise<{ code: string; nodeId?: string | undefined; path?: string | undefined; message: string }[]> {
  const loaded = await loadValidFlow(file).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (loaded === undefined) return [];
  expect(loaded).toBeInstanceOf(FlowInvalidError);
  return (loaded as FlowInvalidError).errors.map(({ code, nodeId, path: at, message }) => ({ code, nodeId, path: at, message }));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-agent-refs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('agent.ref: a subagent is a tool of the flow', () => {
  it('validates as a tool named by its id or config, with the input schema { task } and its flow as a subagent spec', async () => {
    const flow = flowWith({ research: 'research.json' });
    const checked = validateFlow(flow);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.flow.tools.map((tool) => [tool.name, tool.hasInputSchema])).toEqual([['research', true]]);
    expect(checked.flow.agent.config.allowedTools).toEqual(['research']);
    const [spec] = await allowedToolSpecs(planRun(checked.flow, dir));
    expect(spec).toEqual({
      name: 'research',
      description: expect.stringContaining('agent_id "research"'),
      inputSchema: { type: 'object', required: ['task'], additionalProperties: false, properties: { task: expect.objectContaining({ type: 'string', minLength: 1 }) } },
      subagent: { flow: 'research.json', timeoutMs: 300_000 },
    });
    const wrong = validateFlow({ ...flow, nodes: flow.nodes.map((node) => (node.type === 'agent.ref' ? { ...node, config: { flow: '', timeoutMs: 0 } } : node)) });
    expect(!wrong.ok && wrong.errors.map((error) => error.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
    const missing = validateFlow({ ...flow, nodes: flow.nodes.map((node) => (node.type === 'agent.ref' ? { ...node, config: {} } : node)) });
    expect(!missing.ok && missing.errors[0]?.message).toMatch(/flow/);
  });

  it('is served only by a host that runs subagents (TOOL_CONFIG_INVALID elsewhere, e.g. Node-RED)', async () => {
    await write('host/child.json', flowWith());
    const checked = validateFlow(flowWith({ child: 'child.json' }));
    if (!checked.ok) throw new Error('invalid');
    const refused = await buildTools(planRun(checked.flow, path.join(dir, 'host'))).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: ErrorCode.TOOL_CONFIG_INVALID, message: expect.stringContaining('subagent "child"') });
  });
});

describe('validation of a flow with subagents, down the tree', () => {
  it('loads a flow whose subagents are valid flows, nested within the depth limit', async () => {
    await write('ok/leaf.json', flowWith());
    await write('ok/sub/middle.json', flowWith({ leaf: '../leaf.json' }));
    const top = await write('ok/top.json', flowWith({ middle: 'sub/middle.json', leaf: 'leaf.json' }));
    expect(await refusal(top)).toEqual([]);
  });

  it('refuses a subagent flow that does not exist: AGENT_REF_NOT_FOUND on the node, also deeper down', async () => {
    const top = await write('missing/top.json', flowWith({ ghost: 'ghost.json' }));
    expect(await refusal(top)).toEqual([
      { code: ErrorCode.AGENT_REF_NOT_FOUND, nodeId: 'ghost', path: 'nodes[2].config.flow', message: expect.stringContaining('ghost.json does not exist') },
    ]);
    await write('missing/mid.json', flowWith({ ghost: 'ghost.json' }));
    const deeper = await write('missing/deeper.json', flowWith({ mid: 'mid.json' }));
    expect(await refusal(deeper)).toEqual([
      { code: ErrorCode.AGENT_REF_NOT_FOUND, nodeId: 'mid', path: 'nodes[2].config.flow', message: expect.stringContaining('mid.json → ghost.json does not exist') },
    ]);
  });

  it('refuses a subagent flow that is not a valid flow, or whose files are outside the allowed folders: AGENT_REF_INVALID', async () => {
    await write('invalid/broken.json', '{ "nodes": [');
    await write('invalid/nomodel.json', { nodes: [{ id: 'agent', type: 'agent.core' }], edges: [] });
    await write('invalid/escapes.json', {
      ...flowWith(),
      nodes: [...flowWith().nodes, { id: 'mod', type: 'tool.module', config: { module: '../../outside.mjs' } }],
      edges: [...flowWith().edges, { id: 'e-mod', source: 'agent', target: 'mod' }],
    });
    const top = await write('invalid/top.json', flowWith({ broken: 'broken.json', nomodel: 'nomodel.json', escapes: 'escapes.json' }));
    const errors = await refusal(top);
    expect(errors.map((error) => [error.code, error.nodeId])).toEqual([
      [ErrorCode.AGENT_REF_INVALID, 'broken'],
      [ErrorCode.AGENT_REF_INVALID, 'nomodel'],
      [ErrorCode.AGENT_REF_INVALID, 'escapes'],
    ]);
    expect(errors[0]?.message).toContain(ErrorCode.FLOW_INVALID_JSON);
    expect(errors[1]?.message).toContain(ErrorCode.NO_MODEL);
    expect(errors[2]?.message).toContain(ErrorCode.FLOW_FILE_OUTSIDE_ROOTS);
    // No message names a file by its absolute path: they may be sent to a remote client.
    for (const error of errors) expect(error.message).not.toContain(dir);
  });

  it('refuses a subagent flow outside the allowed folders with FLOW_FILE_OUTSIDE_ROOTS, before reading it', async () => {
    await write('elsewhere/other.json', flowWith());
    await mkdir(path.join(dir, 'roots/flows'), { recursive: true });
    await symlink(path.join(dir, 'elsewhere/other.json'), path.join(dir, 'roots/flows/link.json'));
    const top = await write('roots/flows/top.json', flowWith({ up: '../../elsewhere/other.json', link: 'link.json' }));
    expect((await refusal(top)).map((error) => [error.code, error.nodeId])).toEqual([
      [ErrorCode.FLOW_FILE_OUTSIDE_ROOTS, 'up'],
      [ErrorCode.FLOW_FILE_OUTSIDE_ROOTS, 'link'],
    ]);
    // Allowed with --allow-files: then it runs.
    await expect(loadValidFlow(top, undefined, [path.join(dir, 'elsewhere')])).resolves.toBeDefined();
  });

  it('refuses a cycle: A → B → A, A → A and one below the flow (B → C → B), with AGENT_REF_CYCLE', async () => {
    const a = await write('cycle/a.json', flowWith({ b: 'b.json' }));
    await write('cycle/b.json', flowWith({ a: 'a.json' }));
    expect(await refusal(a)).toEqual([
      { code: ErrorCode.AGENT_REF_CYCLE, nodeId: 'b', path: 'nodes[2].config.flow', message: expect.stringContaining('b.json → a.json leads back') },
    ]);
    const self = await write('cycle/self.json', flowWith({ again: './self.json' }));
    expect((await refusal(self)).map((error) => error.code)).toEqual([ErrorCode.AGENT_REF_CYCLE]);
    await write('cycle/c.json', flowWith({ d: 'd.json' }));
    await write('cycle/d.json', flowWith({ c: 'c.json' }));
    const above = await write('cycle/above.json', flowWith({ c: 'c.json' }));
    expect(await refusal(above)).toEqual([expect.objectContaining({ code: ErrorCode.AGENT_REF_CYCLE, message: expect.stringContaining('c.json → d.json → c.json') })]);
    // Without the flow's own path (an unsaved flow), a cycle through it shows once it is reached again.
    const unsaved = flowWith({ b: 'b.json' });
    expect((await checkAgentRefs(unsaved, undefined, flowFileRoots(a))).map((error) => error.code)).toEqual([ErrorCode.AGENT_REF_CYCLE]);
  });

  it(`refuses subagents nested deeper than ${MAX_SUBAGENT_DEPTH} levels with AGENT_REF_TOO_DEEP, and takes ${MAX_SUBAGENT_DEPTH}`, async () => {
    // level-6.json is a leaf; level-n.json calls level-(n+1).json.
    await write('deep/level-6.json', flowWith());
    for (let level = 5; level >= 0; level--) await write(`deep/level-${level}.json`, flowWith({ next: `level-${level + 1}.json` }));
    expect(await refusal(path.join(dir, 'deep/level-1.json'))).toEqual([]);
    expect(await refusal(path.join(dir, 'deep/level-0.json'))).toEqual([
      { code: ErrorCode.AGENT_REF_TOO_DEEP, nodeId: 'next', path: 'nodes[2].config.flow', message: expect.stringContaining(`${MAX_SUBAGENT_DEPTH + 1} levels deep`) },
    ]);
  });

  it('reports the same through validateFlowTree (redflow validate, the API) as a run would refuse it', async () => {
    const top = await write('tree/top.json', flowWith({ ghost: 'ghost.json' }));
    const flow = flowWith({ ghost: 'ghost.json' });
    const checked = await validateFlowTree(validateFlow(flow), flow, flowFileRoots(top), top);
    expect(!checked.ok && checked.errors.map((error) => error.code)).toEqual([ErrorCode.AGENT_REF_NOT_FOUND]);
    // A flow whose graph is wrong reports that, without walking its subagents.
    const graph = { ...flow, edges: [] };
    const wrong = await validateFlowTree(validateFlow(graph), graph, flowFileRoots(top), top);
    expect(!wrong.ok && wrong.errors.map((error) => error.code)).not.toContain(ErrorCode.AGENT_REF_NOT_FOUND);
  });
});
