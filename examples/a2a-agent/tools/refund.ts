// A tool.module tool: refunds an order (here it only says so). The tool's name is its node's id.
import type { ToolDefinition } from 'redflow';

const refund: ToolDefinition<{ orderId: string; amount: number }> = {
  name: 'refund',
  description: 'Refunds an amount in EUR of an order (like A-1001) to the card it was paid with.',
  inputSchema: {
    type: 'object',
    required: ['orderId', 'amount'],
    properties: { orderId: { type: 'string', pattern: '^[A-Z]-\\d{4}$' }, amount: { type: 'number', exclusiveMinimum: 0 } },
    additionalProperties: false,
  },
  execute({ orderId, amount }) {
    return { orderId, refunded: amount, currency: 'EUR' };
  },
};

export default refund;
