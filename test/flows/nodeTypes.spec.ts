import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  EDGE_KINDS,
  NODE_TYPES,
  NodeType,
  isCapabilityType,
  isCoreType,
  isEdgeKind,
  isInputType,
  isMemoryType,
  isModelType,
  isNodeType,
  isOutputType,
  isToolType,
  roleOf,
} from '../../src/flows/nodeTypes.js';

const source = (relative: string): string => readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8');

/** Module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*['"]([^'"]+)['"]/g)) found.push(match[1] ?? '');
  for (const match of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) found.push(match[1] ?? '');
  for (const match of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)) found.push(match[1] ?? '');
  return found;
}

describe('nodeTypes', () => {
  it('should list the thirteen node types of a flow', () => {
    expect(NODE_TYPES).toEqual([
      'trigger.input',
      'agent.core',
      'model.llm',
      'memory.kv',
      'tool.http',
      'tool.module',
      'tool.postgres',
      'tool.mcp',
      'tool.client',
      'tool.flow',
      'agent.ref',
      'agent.a2a',
      'response.chat',
      'response.end',
    ]);
    expect(EDGE_KINDS).toEqual(['data', 'model', 'tool', 'memory']);
  });

  it('should give each type its role', () => {
    expect(NODE_TYPES.map(roleOf)).toEqual(['input', 'core', 'model', 'memory', 'tool', 'tool', 'tool', 'tool', 'tool', 'tool', 'tool', 'tool', 'output', 'output']);
    expect(roleOf('tool.mysql')).toBeUndefined();
    expect(roleOf('__proto__')).toBeUndefined();
    expect(roleOf(42)).toBeUndefined();
  });

  it('should classify types with the is* helpers', () => {
    expect(isNodeType(NodeType.ToolModule)).toBe(true);
    expect(isNodeType('constructor')).toBe(false);
    expect(isInputType('trigger.input')).toBe(true);
    expect(isCoreType('agent.core')).toBe(true);
    expect(isModelType('model.llm')).toBe(true);
    expect(isToolType('tool.http') && isToolType('tool.module') && isToolType('tool.postgres') && isToolType('tool.mcp') && isToolType('tool.client') && isToolType('tool.flow') && isToolType('agent.ref') && isToolType('agent.a2a')).toBe(true);
    expect(isToolType('model.llm')).toBe(false);
    expect(isMemoryType('memory.kv')).toBe(true);
    expect(isOutputType('response.end') && isOutputType('response.chat')).toBe(true);
    expect(NODE_TYPES.filter(isCapabilityType)).toEqual(['model.llm', 'memory.kv', 'tool.http', 'tool.module', 'tool.postgres', 'tool.mcp', 'tool.client', 'tool.flow', 'agent.ref', 'agent.a2a']);
    expect(isEdgeKind('memory')).toBe(true);
    expect(isEdgeKind('toString')).toBe(false);
  });

  it('should keep nodeTypes.ts and edgeRules.ts free of Node imports (they are shared with the browser)', () => {
    const allowed: Record<string, readonly string[]> = {
      '../../src/flows/nodeTypes.ts': [],
      '../../src/flows/edgeRules.ts': ['../errors.js', './nodeTypes.js'],
      '../../src/errors.ts': [],
    };
    for (const [file, imports] of Object.entries(allowed)) {
      const text = source(file);
      expect(importsOf(text).sort(), file).toEqual([...imports].sort());
      expect(text, file).not.toMatch(/\b(?:process|Buffer|require|__dirname)\b[.(]/);
    }
  });

  it('should detect a Node import in the purity check', () => {
    expect(importsOf("import { readFile } from 'node:fs';\nexport * from \"./x.js\";\nawait import('os');")).toEqual([
      'node:fs',
      './x.js',
      'os',
    ]);
  });
});
