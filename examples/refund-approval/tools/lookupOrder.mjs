// Looks an order up in a small in-memory table (an example: a real one would ask the shop's API).
const ORDERS = { 'A-1001': { orderId: 'A-1001', total: 49.9, currency: 'EUR', status: 'delivered' } };

export default {
  name: 'lookup_order',
  description: 'Finds an order by its id: its total, currency and status',
  inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } }, additionalProperties: false },
  execute({ orderId }) {
    const order = ORDERS[orderId];
    if (!order) throw new Error(`no order ${orderId}`);
    return order;
  },
};
