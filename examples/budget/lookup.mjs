// A tool for the budget flow: looks an order up (always shipped).
export default {
  name: 'lookup',
  description: 'Finds an order by its id',
  inputSchema: { type: 'object', required: ['order'], properties: { order: { type: 'string' } }, additionalProperties: false },
  execute(input) {
    return { order: input.order, status: 'shipped', carrier: 'DHL', eta: '2 days' };
  },
};
