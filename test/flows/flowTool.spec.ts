import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { validateFlowFiles } from '../../src/flows/flowFiles.js';
import { flowFileRoots } from '../../src/files/fileRoots.js';
import { FlowInvalidError, loadValidFlow } from '../../src/flows/loadValidFlow.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { buildTools } from '../../src/runtime/buildTools.js';
import { planRun } from '../../src/runtime/runPlan.js';

/** A flow whose one tool is a Node-RED flow. */
const flowWithFlowTool = (toolConfig: Record<string, unknown> = {}) => ({
  id: 'flow-tool',
  nodes: [
    { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
    { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'ok', confidence: 1 }] } },
    { id: 'lookup', type: 'tool.flow', config: { description: 'looks it up in a Node-RED flow', inputSchema: { type: 'object' }, timeoutMs: 500, ...toolConfig } },
  ],
  edges: [
    { id: 'e1', source: 'agent', target: 'model' },
    { id: 'e2', source: 'agent', target: 'lookup' },
  ],
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-flow-tool-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('tool.flow: a tool whose body is a Node-RED flow', () => {
  it('is a valid tool of a flow graph, its config and input schema checked like the other tools', () => {
    const checked = validateFlow(flowWithFlowTool());
    expect(checked.ok).toBe(true);
    expect(checked.ok && checked.flow.tools.map((tool) => [tool.name, tool.hasInputSchema])).toEqual([['lookup', true]]);
    const wrong = validateFlow(flowWithFlowTool({ module: 'tools/x.ts', inputSchema: { type: 'no-such-type' } }));
    expect(!wrong.ok && wrong.errors.map((error) => error.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID, ErrorCode.NODE_CONFIG_INVALID]);
    const bare = validateFlow(flowWithFlowTool({ inputSchema: undefined }));
    expect(bare.warnings.map((warning) => warning.code)).toContain(ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA);
  });

  it('is refused where the flow would run outside Node-RED: FLOW_TOOL_NODE_RED_ONLY on the node, when validated with its files and when loaded to run', async () => {
    const flow = flowWithFlowTool();
    const file = path.join(dir, 'flow.json');
    await writeFile(file, JSON.stringify(flow));
    const withFiles = await validateFlowFiles(validateFlow(flow), flow, flowFileRoots(file));
    expect(withFiles.ok).toBe(false);
    expect(!withFiles.ok && withFiles.errors).toEqual([
      expect.objectContaining({ code: ErrorCode.FLOW_TOOL_NODE_RED_ONLY, nodeId: 'lookup', path: 'nodes[2].type', hint: expect.stringContaining('--node-red') }),
    ]);
    const refused = await loadValidFlow(file).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FlowInvalidError);
    expect((refused as FlowInvalidError).errors.map((error) => error.code)).toEqual([ErrorCode.FLOW_TOOL_NODE_RED_ONLY]);
  });

  it('is never built as a tool of this process, should a flow get that far unvalidated', async () => {
    const checked = validateFlow(flowWithFlowTool());
    if (!checked.ok) throw new Error('the flow should validate');
    const error = await buildTools(planRun(checked.flow, dir)).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.FLOW_TOOL_NODE_RED_ONLY);
  });
});
