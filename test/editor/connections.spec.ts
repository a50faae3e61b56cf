import { describe, expect, it } from 'vitest';
import { checkEditorConnection } from '../../src/editor/flow/connections.js';
import { SOURCE_HANDLES } from '../../src/editor/flow/editorNodes.js';
import { checkConnection } from '../../src/flows/edgeRules.js';
import { NODE_TYPES, roleOf } from '../../src/flows/nodeTypes.js';

const typeOf = (id: string) => id.split('#')[0];
const connection = (source: string, target: string, sourceHandle: string | null = null) => ({ source, target, sourceHandle, targetHandle: 'in' });

describe('the editor’s connection check', () => {
  it('should decide every pair of node types as flow validation does', () => {
    for (const source of NODE_TYPES) {
      for (const target of NODE_TYPES) {
        expect(checkEditorConnection(connection(`${source}#1`, `${target}#2`), typeOf)).toEqual(checkConnection(source, target));
      }
    }
  });

  it('should only offer source handles whose kind some rule allows', () => {
    for (const source of NODE_TYPES) {
      const role = roleOf(source);
      const handles = role ? SOURCE_HANDLES[role] : [];
      for (const handle of handles) {
        const anyTarget = NODE_TYPES.some((target) => checkConnection(source, target, handle).ok);
        expect(anyTarget, `${source} handle ${handle}`).toBe(true);
      }
    }
  });

  it('should refuse an edge from a handle of the wrong kind, saying which kind is right', () => {
    const check = checkEditorConnection(connection('agent.core#1', 'tool.module#2', 'model'), typeOf);
    expect(check).toMatchObject({ ok: false, code: 'EDGE_KIND_MISMATCH' });
    expect(checkEditorConnection(connection('agent.core#1', 'tool.module#2', 'tool'), typeOf)).toEqual({ ok: true, kind: 'tool' });
  });

  it('should refuse tool → model with the rule’s own message', () => {
    const check = checkEditorConnection(connection('trigger.input#1', 'model.llm#2', 'data'), typeOf);
    expect(check).toEqual({
      ok: false,
      code: 'EDGE_NOT_ALLOWED',
      message: 'trigger.input cannot connect to model.llm: inputs connect only to an agent.core (input → agent.core)',
    });
  });
});
