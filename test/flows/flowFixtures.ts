import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import type { FlowDiagnostic, FlowValidation } from '../../src/flows/validateFlow.js';

/** Absolute path of a file in test/fixtures/flows. */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/flows/${name}`, import.meta.url));
}

/** A fixture parsed as JSON. */
export function readFixture(name: string): unknown {
  return JSON.parse(readFileSync(fixturePath(name), 'utf8'));
}

/**
 * A small valid flow, fresh each call: trigger → agent, agent → model, agent → one tool (with an
 * input schema), agent → output. Tests break one thing each.
 */
export function validFlow(): FlowDefinition {
  return {
    id: 'small',
    start: 'in',
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3, allowedTools: ['lookup'] } },
      { id: 'llm', type: 'model.llm', config: { provider: 'scripted', answers: [] } },
      {
        id: 'lookup',
        type: 'tool.http',
        config: {
          url: 'https://api.example.com/orders/{id}',
          inputSchema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        },
      },
      { id: 'out', type: 'response.chat' },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'llm' },
      { id: 'e3', source: 'agent', target: 'lookup' },
      { id: 'e4', source: 'agent', target: 'out' },
    ],
  };
}

/** The node of `flow` with id `id` (throws when there is none, so a broken test fails loudly). */
export function nodeOf(flow: FlowDefinition, id: string): FlowDefinition['nodes'][number] {
  const node = flow.nodes.find((n) => n.id === id);
  if (node === undefined) throw new Error(`no node ${id}`);
  return node;
}

/** The errors of a validation that must have failed. */
export function errorsOf(result: FlowValidation): FlowDiagnostic[] {
  if (result.ok) throw new Error('expected the flow to be invalid, but it validated');
  return result.errors;
}

/** Asserts the validation failed with exactly these error codes (in any order, with repeats). */
export function expectErrorCodes(result: FlowValidation, codes: readonly string[]): FlowDiagnostic[] {
  const errors = errorsOf(result);
  expect(errors.map((e) => e.code).sort()).toEqual([...codes].sort());
  return errors;
}
