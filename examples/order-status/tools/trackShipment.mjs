// A tool.module tool: where a parcel is, by tracking code.

/** @type {Record<string, { location: string; eta: string }>} */
const lastScans = {
  'FS-77812': { location: 'Lyon sorting centre', eta: '2026-11-23' },
};

/** @type {import('redflow').ToolDefinition<{ trackingCode: string }>} */
const trackShipment = {
  name: 'track_shipment',
  description: 'Gives the last known location and the expected delivery date of a parcel.',
  inputSchema: {
    type: 'object',
    required: ['trackingCode'],
    properties: { trackingCode: { type: 'string', minLength: 1 } },
    additionalProperties: false,
  },
  execute({ trackingCode }) {
    const scan = lastScans[trackingCode];
    if (!scan) throw new Error(`unknown tracking code ${trackingCode}`);
    return { trackingCode, ...scan };
  },
};

export default trackShipment;
