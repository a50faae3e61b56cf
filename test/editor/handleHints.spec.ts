import { describe, expect, it } from 'vitest';
import { NodeRole } from '../../src/flows/nodeTypes.js';
import { explainHandle, fittingHandlesOn } from '../../src/editor/flow/handleHints.js';

describe('handleHints', () => {
  it('should name the handles each handle may connect to, from the edge rules', () => {
    expect(explainHandle({ role: NodeRole.Model, handleId: 'in', type: 'target' })).toBe("the model's bottom handle takes only the agent core's model handle (top)");
    expect(explainHandle({ role: NodeRole.Core, handleId: 'in', type: 'target' })).toBe(
      "the agent core's left handle takes only the input's right handle or the memory's right handle",
    );
    expect(explainHandle({ role: NodeRole.Core, handleId: 'memory', type: 'source' })).toBe(
      "the agent core's memory handle (bottom left) connects only to the memory's top handle",
    );
  });

  it('should find the one handle of a node that a dragged handle fits, and none on a node it cannot join', () => {
    expect(fittingHandlesOn(NodeRole.Memory, { role: NodeRole.Core, handleId: 'in', type: 'target' })).toEqual([{ role: NodeRole.Memory, handleId: 'memory', type: 'source' }]);
    expect(fittingHandlesOn(NodeRole.Output, { role: NodeRole.Core, handleId: 'model', type: 'source' })).toEqual([]);
  });
});
