// Node-RED loads node files with require(); Redflow is an ES module, imported here.
module.exports = async function (RED) {
  const { registerIoNodes } = await import('redflow/node-red');
  registerIoNodes(RED);
};
