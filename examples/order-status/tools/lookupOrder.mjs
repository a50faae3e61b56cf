// A tool.module tool: what the shop knows about an order. The tool's name is its node's id.
// Plain JavaScript, so the demo starts at once on every Node; a tool may as well be TypeScript
// (`lookupOrder.ts`): Node 22.18+ strips its types itself, older Nodes load it with tsx.

/** @type {Record<string, { status: string; carrier: string; trackingCode: string; placedAt: string }>} */
const orders = {
  'A-1001': { status: 'shipped', carrier: 'FastShip', trackingCode: 'FS-77812', placedAt: '2026-11-17' },
  'A-1002': { status: 'packing', carrier: 'FastShip', trackingCode: '', placedAt: '2026-11-20' },
};

/** @type {import('redflow').ToolDefinition<{ orderId: string }>} */
const lookupOrder = {
  name: 'lookup_order',
  description: 'Finds an order by its id (like A-1001): status, carrier and tracking code.',
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

export default lookupOrder;
