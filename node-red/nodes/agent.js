// Node-RED loads node files with require(); Redflow is an ES module, imported here.
module.exports = async function (RED) {
  const { registerAgentNode } = await import('redflow/node-red');
  registerAgentNode(RED);
};
