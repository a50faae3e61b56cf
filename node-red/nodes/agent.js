// Node-RED loads node files with require(); Redflow is an ES module, imported here.
// Awaited: with REDFLOW_OTEL=1 telemetry is on before Node-RED starts a flow.
module.exports = async function (RED) {
  const { registerAgentNode } = await import('redflow/node-red');
  await registerAgentNode(RED);
};
