// Node-RED loads node files with require(); Redflow is an ES module, imported here.
module.exports = async function (RED) {
  const { registerCapabilityNodes } = await import('redflow/node-red');
  registerCapabilityNodes(RED);
};
