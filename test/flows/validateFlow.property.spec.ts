import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validators } from '../../src/contracts/schemas.js';
import { ErrorCode } from '../../src/errors.js';
import { EDGE_KINDS, NODE_TYPES } from '../../src/flows/nodeTypes.js';
import { type FlowValidation, validateFlow } from '../../src/flows/validateFlow.js';
import { readFixture } from './flowFixtures.js';

const CODES = new Set<string>(Object.values(ErrorCode));

/** What every result must look like, whatever the input. */
function expectWellFormed(result: FlowValidation): void {
  const diagnostics = result.ok ? result.warnings : [...result.errors, ...result.warnings];
  if (!result.ok) expect(result.errors.length).toBeGreaterThan(0);
  for (const d of diagnostics) {
    expect(CODES.has(d.code), d.code).toBe(true);
    // validateFlow's last-resort catch must not be what answered: that would hide a bug.
    expect(d.message).not.toMatch(/^the flow could not be validated/);
    expect(typeof d.message).toBe('string');
    expect(d.message.length).toBeGreaterThan(0);
  }
  if (!result.ok) {
    expect(result.errors.every((d) => d.severity === 'error')).toBe(true);
    return;
  }
  expect(result.warnings.every((d) => d.severity === 'warning')).toBe(true);
  // A valid flow resolves into parts a run can trust.
  const { flow } = result;
  expect(validators.agentCore(flow.agent.config)).toBe(true);
  expect(flow.agent.node.type).toBe('agent.core');
  expect(flow.model.type).toBe('model.llm');
  const names = flow.tools.map((t) => t.name);
  expect(new Set(names).size).toBe(names.length);
  for (const allowed of flow.agent.config.allowedTools) expect(names).toContain(allowed);
  if (flow.memory !== undefined) expect(flow.memory.type).toBe('memory.kv');
}

/** Values that mean something in a flow, so mutations reach the semantic checks, not only the schema. */
const meaningful = fc.oneof(
  fc.constantFrom(...NODE_TYPES, ...EDGE_KINDS, 'tool.mysql', 'reactive', 'react', '__proto__', 'constructor'),
  fc.constantFrom('trigger1', 'agent1', 'llm1', 'memory1', 'http1', 'response1', 'e1', 'e4', 'ghost'),
  fc.constantFrom(0, 1, 5, 21, -1, 0.5, 1.5, true, null, [], {}),
  fc.constant({ id: 'x1', type: 'tool.http', config: { url: 'https://x' } }),
  fc.constant({ id: 'e9', source: 'agent1', target: 'llm1' }),
  fc.constant({ type: 'iteration_limit', value: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
);

type Container = Record<string, unknown> | unknown[];
type Mutation = { at: number; op: 'set' | 'delete' | 'duplicate' | 'addKey'; value: unknown; key: string };

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('set', 'delete', 'duplicate', 'addKey'),
  value: meaningful,
  key: fc.constantFrom('__proto__', 'constructor', 'toString', 'config', 'kind', 'start', 'allowedTools', 'name', 'inputSchema', 'stopConditions', 'maxIterations'),
});

/** Every (container, key) slot inside a JSON value, in a stable order. */
function slots(root: unknown): Array<[Container, string | number]> {
  const found: Array<[Container, string | number]> = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        found.push([value, i]);
        stack.push(item);
      });
    } else if (typeof value === 'object' && value !== null) {
      for (const key of Object.keys(value)) {
        found.push([value as Record<string, unknown>, key]);
        stack.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return found;
}

function mutate(root: Record<string, unknown>, m: Mutation): void {
  const all = slots(root);
  const slot = all[m.at % Math.max(all.length, 1)];
  if (slot === undefined) return;
  const [container, key] = slot;
  const value = structuredClone(m.value);
  if (Array.isArray(container)) {
    const i = key as number;
    if (m.op === 'set') container[i] = value;
    else if (m.op === 'delete') container.splice(i, 1);
    else if (m.op === 'duplicate') container.push(structuredClone(container[i]));
    else container.push(value);
    return;
  }
  if (m.op === 'set') container[key as string] = value;
  else if (m.op === 'delete') delete container[key as string];
  else if (m.op === 'duplicate') Object.defineProperty(container, `${String(key)}2`, { value: structuredClone(container[key as string]), enumerable: true, writable: true, configurable: true });
  // An own property, even for '__proto__': what JSON.parse makes of such a key.
  else Object.defineProperty(container, m.key, { value, enumerable: true, writable: true, configurable: true });
}

describe('validateFlow (properties)', () => {
  it('should never throw for arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expectWellFormed(validateFlow(value));
      }),
      { numRuns: 500 },
    );
  });

  it('should never throw for arbitrary JavaScript values', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withBoxedValues: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withNullPrototype: true,
          withObjectString: true,
          withSparseArray: true,
          withTypedArray: true,
        }),
        (value) => {
          expectWellFormed(validateFlow(value));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('should never throw for flow-shaped objects with arbitrary nodes and edges', () => {
    const item = fc.oneof(
      fc.record(
        { id: fc.oneof(fc.string(), fc.constantFrom('a', 'b', '__proto__')), type: fc.constantFrom(...NODE_TYPES, 'x'), config: fc.option(fc.object(), { nil: undefined }) },
        { requiredKeys: ['id', 'type'] },
      ),
      fc.anything(),
    );
    const edge = fc.oneof(
      fc.record({ id: fc.string(), source: fc.constantFrom('a', 'b', '__proto__', 'c'), target: fc.constantFrom('a', 'b', 'c'), kind: fc.constantFrom(...EDGE_KINDS) }, { requiredKeys: ['id', 'source', 'target'] }),
      fc.anything(),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), fc.array(edge, { maxLength: 8 }), fc.option(fc.string(), { nil: undefined }), (nodes, edges, start) => {
        expectWellFormed(validateFlow(start === undefined ? { nodes, edges } : { nodes, edges, start }));
      }),
      { numRuns: 500 },
    );
  });

  it('should never throw for random mutations of the graph format example', () => {
    const seed = readFixture('graph-format-example.json') as Record<string, unknown>;
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 6 }), (mutations) => {
        const flow = structuredClone(seed);
        for (const m of mutations) mutate(flow, m);
        const result = validateFlow(flow);
        expectWellFormed(result);
        if (result.ok) valid += 1;
        else invalid += 1;
      }),
      { numRuns: 1000 },
    );
    // The mutations reach both outcomes: the property is not vacuous.
    expect(valid).toBeGreaterThan(0);
    expect(invalid).toBeGreaterThan(0);
  });
});
