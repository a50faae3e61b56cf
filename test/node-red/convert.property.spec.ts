import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FlowDefinition, FlowNode } from '../../src/contracts/schema-types.js';
import { SchemaFile, loadSchema, validators } from '../../src/contracts/schemas.js';
import { NODE_TYPES, NodeType } from '../../src/flows/nodeTypes.js';
import { nodeRedToRedflow } from '../../src/flows/nodeRed/fromNodeRed.js';
import type { NodeRedFlowNode } from '../../src/flows/nodeRed/nodeRedFlows.js';
import { NODE_RED_TYPE_OF, redflowToNodeRed } from '../../src/flows/nodeRed/toNodeRed.js';
import { FieldKind, NODE_RED_TYPES, NodeRedType } from '../../src/flows/nodeRed/nodeRedTypes.js';

/** What a conversion's result is once written as JSON and read again (as every real one is). */
const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,11}$/).filter((name) => name !== '__proto__' && name !== 'constructor');
const nodeId = fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/);
const number = fc.oneof(fc.integer({ min: -1000, max: 100_000 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }));
const jsonObject = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
const anyValue = fc.oneof(fc.string(), number, fc.boolean(), jsonObject, fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.constant(''), fc.constant('5'), fc.constant('false'));

/** A value a config field of this kind may hold in a flow file, or any JSON (a flow is schema-valid with any config). */
function fieldValue(kind: FieldKind): fc.Arbitrary<unknown> {
  const typed = {
    [FieldKind.Text]: fc.string(),
    [FieldKind.Number]: number,
    [FieldKind.Boolean]: fc.boolean(),
    [FieldKind.Json]: fc.oneof(jsonObject, fc.array(fc.string(), { maxLength: 3 })),
    [FieldKind.HeaderOrFalse]: fc.oneof(fc.constant(false as const), fc.stringMatching(/^[A-Za-z-]{1,10}$/)),
  }[kind];
  return fc.oneof({ weight: 4, arbitrary: typed }, { weight: 1, arbitrary: anyValue });
}

/** A config for a node of `type`: some of its Node-RED fields, sometimes a name, sometimes keys no field has. */
function config(type: string): fc.Arbitrary<Record<string, unknown> | undefined> {
  const nodeRedType = NODE_RED_TYPE_OF[type as NodeType];
  const fields = nodeRedType === undefined ? {} : NODE_RED_TYPES[nodeRedType].fields;
  const known = fc.record(Object.fromEntries(Object.entries(fields).map(([field, kind]) => [field, fieldValue(kind)])), { requiredKeys: [] });
  return fc.option(
    fc.tuple(known, fc.option(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,10}$/), fc.constant(''))), jsonObject).map(([values, name, extra]) => ({
      ...extra,
      ...values,
      ...(name !== null && { name }),
    })),
    { nil: undefined },
  );
}

const nodeType = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...NODE_TYPES) }, { weight: 1, arbitrary: fc.constant('tool.mysql') });

const position = fc.oneof(
  fc.record({ x: number, y: number }),
  fc.record({ x: number, y: number, width: fc.integer({ min: 1, max: 400 }) }),
);

function flowNode(id: string): fc.Arbitrary<FlowNode> {
  return nodeType.chain((type) =>
    fc.record(
      { id: fc.constant(id), type: fc.constant(type), label: fc.string(), config: config(type), position },
      { requiredKeys: ['id', 'type'] },
    ).map((node) => (node.type === NodeType.ToolPostgres && node.config !== undefined ? { ...node, config: { ...node.config, connectionString: undefined } } : node)),
  ) as fc.Arbitrary<FlowNode>;
}

/** A flow document valid against flow.schema.json: unique node ids, edges between its nodes (any kinds, either way). */
const flowDocument: fc.Arbitrary<FlowDefinition> = fc.uniqueArray(nodeId, { minLength: 1, maxLength: 8 }).chain((ids) =>
  fc
    .record(
      {
        $schema: fc.constant('../schemas/flow.schema.json'),
        id: fc.oneof(nodeId, fc.string({ minLength: 1 })),
        version: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.string()),
        name: fc.string(),
        description: fc.string(),
        start: fc.constantFrom(...ids),
        nodes: fc.tuple(...ids.map((id) => flowNode(id))),
        edges: fc.array(
          fc.record(
            {
              id: fc.oneof(fc.stringMatching(/^e[0-9]{1,3}$/), nodeId),
              source: fc.constantFrom(...ids),
              target: fc.constantFrom(...ids),
              kind: fc.constantFrom('data', 'model', 'tool', 'memory'),
              label: fc.string(),
              sourceHandle: fc.option(fc.string(), { nil: null }),
              targetHandle: fc.string(),
            },
            { requiredKeys: ['id', 'source', 'target'] },
          ),
          { maxLength: 10 },
        ),
      },
      { requiredKeys: ['nodes', 'edges'] },
    )
    .map((doc) => json(doc) as FlowDefinition)
    .filter((doc) => doc.id === undefined || !ids.includes(doc.id)),
);

describe('converting between Redflow flow documents and Node-RED flows', () => {
  it('gives every schema-valid document back from Node-RED as it was (ids, names, config, positions, edges, order)', () => {
    fc.assert(
      fc.property(flowDocument, (doc) => {
        expect(validators.flow(doc)).toBe(true);
        const { flows, tab } = redflowToNodeRed(doc);
        const back = nodeRedToRedflow(json(flows), { tab });
        expect(json(back.flow)).toEqual(doc);
      }),
      { numRuns: 100 },
    );
  });

  it('gives the same document back once saved into flows holding other tabs, whichever tab id it gets', () => {
    const otherTab: NodeRedFlowNode[] = [
      { id: 'other-tab', type: 'tab', label: 'Other' },
      { id: 'other-inject', type: 'inject', z: 'other-tab', x: 100, y: 40, wires: [['other-debug']] },
      { id: 'other-debug', type: 'debug', z: 'other-tab', x: 300, y: 40, wires: [] },
    ];
    fc.assert(
      fc.property(flowDocument, fc.stringMatching(/^[0-9a-f]{16}$/), (doc, tab) => {
        fc.pre(!doc.nodes.some((node) => node.id === tab || node.id.startsWith('other-')));
        const { flows } = redflowToNodeRed(doc, { tab, existing: otherTab });
        expect(flows.slice(0, 3)).toEqual(otherTab);
        expect(json(nodeRedToRedflow(json(flows), { tab }).flow)).toEqual(doc);
        // Saved again over itself: the same flows.
        expect(json(redflowToNodeRed(doc, { tab, existing: json(flows) }).flows)).toEqual(json(flows));
      }),
      { numRuns: 50 },
    );
  });
});

/** The raw value of a Node-RED property as Node-RED's editor may keep it: blanks, numbers as text, JSON as text. */
function rawValue(kind: FieldKind): fc.Arbitrary<unknown> {
  const raw = {
    [FieldKind.Text]: fc.oneof(fc.string(), fc.constant('')),
    [FieldKind.Number]: fc.oneof(number, number.map(String), fc.constant('')),
    [FieldKind.Boolean]: fc.oneof(fc.boolean(), fc.constantFrom('true', 'false', '')),
    [FieldKind.Json]: fc.oneof(jsonObject, jsonObject.map((value) => JSON.stringify(value)), fc.constant(''), fc.constant('{broken')),
    [FieldKind.HeaderOrFalse]: fc.oneof(fc.constant('false'), fc.constant(''), fc.stringMatching(/^[A-Za-z-]{1,10}$/)),
  }[kind];
  return raw;
}

const MAPPED_OUTPUTS: Readonly<Record<string, number>> = { [NodeRedType.Agent]: 4, [NodeRedType.Input]: 1, [NodeRedType.Response]: 1, [NodeRedType.ToolIn]: 1 };

/** A tab as Node-RED holds it: Redflow nodes with raw properties, Node-RED's own nodes, wires between any of them. */
const nodeRedTab: fc.Arbitrary<NodeRedFlowNode[]> = fc
  .tuple(
    fc.uniqueArray(fc.stringMatching(/^[0-9a-f]{6}$/), { minLength: 1, maxLength: 9 }),
    fc.record({ label: fc.string(), info: fc.option(fc.string(), { nil: undefined }), disabled: fc.boolean() }),
  )
  .chain(([ids, tab]) =>
    fc
      .tuple(
        ...ids.map((id) =>
          fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom(...(Object.keys(NODE_RED_TYPES) as (keyof typeof NODE_RED_TYPES)[])) },
            { weight: 1, arbitrary: fc.constantFrom('function', 'debug', 'inject', NodeRedType.ToolOut) },
          ).chain((type) => {
            const fields = Object.hasOwn(NODE_RED_TYPES, type) ? NODE_RED_TYPES[type as keyof typeof NODE_RED_TYPES].fields : { func: FieldKind.Text };
            const outputs = Object.hasOwn(NODE_RED_TYPES, type) ? (MAPPED_OUTPUTS[type] ?? 0) : type === 'debug' || type === NodeRedType.ToolOut ? 0 : 1;
            return fc.record({
              properties: fc.record(Object.fromEntries(Object.entries(fields).map(([field, kind]) => [field, rawValue(kind)])), { requiredKeys: [] }),
              name: fc.option(fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9_-]{1,10}$/)), { nil: undefined }),
              x: fc.integer({ min: 0, max: 2000 }),
              y: fc.integer({ min: 0, max: 2000 }),
              wires: fc.tuple(...Array.from({ length: outputs }, () => (ids.length === 1 ? fc.constant([]) : fc.uniqueArray(fc.constantFrom(...ids.filter((other) => other !== id)), { maxLength: 3 })))),
              d: fc.option(fc.boolean(), { nil: undefined }),
            }).map(({ properties, name, x, y, wires, d }) => ({
              id,
              type,
              z: 'tab-1',
              ...(name !== undefined && { name }),
              ...properties,
              ...(d !== undefined && { d }),
              x,
              y,
              wires,
            }));
          }),
        ),
      )
      .map((nodes) => [{ id: 'tab-1', type: 'tab', ...tab } as NodeRedFlowNode, ...nodes]),
  );

describe('converting Node-RED flows to Redflow and saving them back', () => {
  it('keeps every node as it was: Redflow nodes with the properties Node-RED had, Node-RED\'s own nodes and every wire', () => {
    fc.assert(
      fc.property(nodeRedTab, (flows) => {
        fc.pre(flows.some((node) => Object.hasOwn(NODE_RED_TYPES, node.type)));
        const { flow, tab } = nodeRedToRedflow(json(flows));
        const back = redflowToNodeRed(json(flow), { tab, existing: json(flows) }).flows;
        expect(json(back)).toEqual(json(flows));
      }),
      { numRuns: 100 },
    );
  });
});

describe('the Node-RED types', () => {
  it('give the Redflow node kinds they stand for every config field of the kind\'s schema (tools their name, postgres its connection string in the credentials)', () => {
    const definitions = (loadSchema(SchemaFile.flow) as { definitions: Record<string, { properties?: Record<string, unknown> }> }).definitions;
    const schemaOf: Partial<Record<NodeType, string>> = {
      [NodeType.TriggerInput]: 'TriggerInputConfig',
      [NodeType.ModelLlm]: 'ModelLlmConfig',
      [NodeType.MemoryKv]: 'MemoryKvConfig',
      [NodeType.ToolHttp]: 'ToolHttpConfig',
      [NodeType.ToolModule]: 'ToolModuleConfig',
      [NodeType.ToolPostgres]: 'ToolPostgresConfig',
      [NodeType.ToolMcp]: 'ToolMcpConfig',
      [NodeType.ToolFlow]: 'ToolFlowConfig',
      [NodeType.ResponseChat]: 'ResponseChatConfig',
      [NodeType.ResponseEnd]: 'ResponseEndConfig',
    };
    const agentSchema = loadSchema(SchemaFile.agentCore) as { properties: Record<string, unknown> };
    // Kinds Node-RED has no node for travel in the tab's metadata (see the round trips above).
    expect(NODE_TYPES.filter((type) => NODE_RED_TYPE_OF[type] === undefined)).toContain(NodeType.ToolClient);
    for (const type of NODE_TYPES) {
      const nodeRedType = NODE_RED_TYPE_OF[type];
      if (nodeRedType === undefined) continue;
      const schemaFields = Object.keys(type === NodeType.AgentCore ? agentSchema.properties : (definitions[schemaOf[type] ?? '']?.properties ?? {}));
      const expected = schemaFields.filter((field) => !(NODE_RED_TYPES[nodeRedType].nameIsConfig && field === 'name') && !(type === NodeType.ToolPostgres && field === 'connectionString'));
      expect([...Object.keys(NODE_RED_TYPES[nodeRedType].fields)].sort(), type).toEqual(expected.sort());
    }
  });
});
