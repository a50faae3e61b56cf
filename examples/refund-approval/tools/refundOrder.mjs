// Refunds an order (an example: it only says what it would do). The flow makes every call wait for
// a person's approval first (requiresApproval); the call's idempotency key would make a real refund
// happen once even if the call were sent again after a crash.
export default {
  name: 'refund_order',
  description: 'Refunds an amount of an order to the customer',
  inputSchema: {
    type: 'object',
    required: ['orderId', 'amount'],
    properties: { orderId: { type: 'string' }, amount: { type: 'number', exclusiveMinimum: 0 } },
    additionalProperties: false,
  },
  execute({ orderId, amount }, { idempotencyKey }) {
    return { refunded: true, orderId, amount, reference: `R-${idempotencyKey}` };
  },
};
