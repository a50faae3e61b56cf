/*
 * What the Redflow nodes' edit dialogs share: JSON fields edited in Node-RED's code editor, kept
 * in the flows as JSON values (the same values a Redflow flow file holds), and the escaping of
 * text shown in the dialogs. Served by Node-RED from this package's resources folder.
 */
(function () {
  if (window.RedflowEditor) return;

  /** Opens the code editor in the element `elementId` on the node's JSON field `field`. */
  function jsonEditor(node, field, elementId) {
    var value = node[field];
    var text = value === undefined || value === null || value === '' ? '' : typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    return RED.editor.createEditor({ id: elementId, mode: 'ace/mode/json', value: text });
  }

  /**
   * The editor's value as the node keeps it: '' when empty, the parsed JSON, or the text itself
   * when it does not parse (the agent's wiring check then says what is wrong with it).
   */
  function readJson(editor) {
    var text = editor.getValue().trim();
    if (text === '') return '';
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  function closeEditor(editor) {
    if (editor) editor.destroy();
  }

  function escape(text) {
    return $('<div>').text(text === undefined || text === null ? '' : String(text)).html();
  }

  $('<style>')
    .text('.redflow-muted { color: var(--red-ui-secondary-text-color); margin-left: 4px; }')
    .appendTo('head');

  window.RedflowEditor = { jsonEditor: jsonEditor, readJson: readJson, closeEditor: closeEditor, escape: escape };
})();
