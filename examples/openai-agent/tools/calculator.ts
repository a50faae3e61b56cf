// A tool.module tool for the real-model example: exact arithmetic, which language models get wrong.
import type { ToolDefinition } from 'redflow';

type Operation = 'add' | 'subtract' | 'multiply' | 'divide';

const calculator: ToolDefinition<{ operation: Operation; a: number; b: number }> = {
  name: 'calculator',
  description: 'Exact arithmetic on two numbers: add, subtract, multiply or divide.',
  inputSchema: {
    type: 'object',
    required: ['operation', 'a', 'b'],
    properties: {
      operation: { enum: ['add', 'subtract', 'multiply', 'divide'] },
      a: { type: 'number' },
      b: { type: 'number' },
    },
    additionalProperties: false,
  },
  execute({ operation, a, b }) {
    if (operation === 'divide' && b === 0) throw new Error('cannot divide by zero');
    const result = { add: a + b, subtract: a - b, multiply: a * b, divide: a / b }[operation];
    return { result };
  },
};

export default calculator;
