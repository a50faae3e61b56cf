import { describe, expect, it } from 'vitest';
import { validateNodeConfig } from '../../src/editor/flow/configSchemas.js';
import { checkStopConditionValues, setStopCondition, setStopConditionValue } from '../../src/editor/flow/stopConditions.js';
import { resolveAgentConfig } from '../../src/flows/agentConfig.js';
import { NodeType } from '../../src/flows/nodeTypes.js';

const agent = (stopConditions: unknown, maxIterations = 5) => ({ strategy: 'react', maxIterations, stopConditions });

describe('the General tab’s stop conditions', () => {
  it('should switch a condition on with its default value and off again, keeping the other entries', () => {
    const start = { strategy: 'react', maxIterations: 5 };
    const on = setStopCondition(start, 'confidence_threshold', true);
    expect(on.stopConditions).toEqual([{ type: 'confidence_threshold', value: 0.8 }]);
    const both = setStopCondition(on, 'final_answer', true);
    expect(both.stopConditions).toEqual([{ type: 'confidence_threshold', value: 0.8 }, { type: 'final_answer' }]);
    expect(setStopCondition(both, 'confidence_threshold', false).stopConditions).toEqual([{ type: 'final_answer' }]);
    // None left: the key goes (the schema's default is []).
    expect(setStopCondition(on, 'confidence_threshold', false)).toEqual(start);
    expect(setStopCondition({ maxIterations: 2 }, 'iteration_limit', true).stopConditions).toEqual([{ type: 'iteration_limit', value: 2 }]);
  });

  it('should set the value of the first entry of a type, and remove it when emptied', () => {
    const config = agent([{ type: 'final_answer' }, { type: 'confidence_threshold', value: 0.8 }, { type: 'confidence_threshold', value: 0.1 }]);
    expect(setStopConditionValue(config, 'confidence_threshold', 0.6).stopConditions).toEqual([
      { type: 'final_answer' },
      { type: 'confidence_threshold', value: 0.6 },
      { type: 'confidence_threshold', value: 0.1 },
    ]);
    expect(setStopConditionValue(config, 'confidence_threshold', undefined).stopConditions).toContainEqual({ type: 'confidence_threshold' });
  });

  it('should report out-of-range values on the entry’s path, as flow validation does', () => {
    const cases: unknown[][] = [
      [{ type: 'confidence_threshold', value: 0.6 }],
      [{ type: 'confidence_threshold', value: 1.5 }],
      [{ type: 'confidence_threshold', value: -0.1 }],
      [{ type: 'confidence_threshold', value: '0.8' }],
      [{ type: 'confidence_threshold' }],
      [{ type: 'final_answer' }, { type: 'iteration_limit', value: 3 }],
      [{ type: 'iteration_limit', value: 0 }],
      [{ type: 'iteration_limit', value: 6 }],
      [{ type: 'iteration_limit', value: 2.5 }],
    ];
    for (const stopConditions of cases) {
      const config = agent(stopConditions);
      const editor = checkStopConditionValues(config).map((issue) => issue.detail);
      const server = resolveAgentConfig(config, { nodeId: 'agent', path: 'nodes[0]' }, [{ name: 't', nodeId: 't', path: 'nodes[1]' }])
        .errors.filter((error) => error.path?.includes('stopConditions'))
        .map((error) => error.message.replace(/^.*stop condition \d+ is invalid: /, ''));
      expect(editor, JSON.stringify(stopConditions)).toEqual(server);
    }
    expect(validateNodeConfig(NodeType.AgentCore, agent([{ type: 'final_answer' }, { type: 'confidence_threshold', value: 1.5 }]), ['t'])).toEqual([
      {
        field: 'stopConditions',
        path: ['1', 'value'],
        detail: 'confidence_threshold needs a number value from 0 to 1, got 1.5',
        message: '1.value: confidence_threshold needs a number value from 0 to 1, got 1.5',
      },
    ]);
  });

  it('should give schema errors inside the list their entry’s path', () => {
    expect(validateNodeConfig(NodeType.AgentCore, agent([{ type: 'stop_now' }, { value: 1 }]), ['t'])).toEqual([
      { field: 'stopConditions', path: ['0', 'type'], detail: 'must be one of "final_answer", "confidence_threshold", "iteration_limit"', message: '0.type: must be one of "final_answer", "confidence_threshold", "iteration_limit"' },
      { field: 'stopConditions', path: ['1'], detail: "'type' is required", message: "1: 'type' is required" },
    ]);
  });
});
