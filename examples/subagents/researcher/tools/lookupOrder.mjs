// A tool.module tool of the researcher subagent: what the shop knows about an order.
const orders = {
  'A-1001': { status: 'shipped', carrier: 'FastShip', trackingCode: 'FS-77812', shippedAt: '2026-11-18' },
  'A-1002': { status: 'packing', carrier: 'FastShip', trackingCode: '', shippedAt: null },
};

export default {
  name: 'lookup_order',
  description: 'Finds an order by its id (like A-1001): status, carrier, tracking code and when it shipped.',
  inputSchema: {
    type: 'object',
    required: ['orderId'],
    properties: { orderId: { type: 'string', pattern: '^[A-Z]-\\d{4}$' } },
    additionalProperties: false,
  },
  execute({ orderId }) {
    const order = orders[orderId];
    if (!order) throw new Error(`no order ${orderId}`);
    return { orderId, ...order };
  },
};
