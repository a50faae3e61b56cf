// The small-model flow's tool: an order's status by its id (every order shipped on 3 March).
export default {
  name: 'lookup',
  description: 'Finds an order by its id, e.g. {"order": "A-1001"}',
  inputSchema: { type: 'object', required: ['order'], properties: { order: { type: 'string', pattern: '^[A-Z]-\\d+$' } }, additionalProperties: false },
  execute: ({ order }) => ({ order, status: 'shipped', shippedOn: '03-03' }),
};
