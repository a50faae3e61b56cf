/** The config form of a model, tool, memory, input or output node, checked against its schema as it is edited. */
import { useReactFlow } from '@xyflow/react';
import { useMemo } from 'react';
import type { FlowDiagnostic } from '../../flows/diagnostics.js';
import { NodeType, isNodeType } from '../../flows/nodeTypes.js';
import { configSchemaOf, validateNodeConfig } from '../flow/configSchemas.js';
import { modelFieldsHidden } from '../flow/modelFields.js';
import { flowTypeOf, type RedflowEdge, type RedflowNode } from '../flow/editorNodes.js';
import { NODE_TYPE_SUMMARY } from '../flow/palette.js';
import { SchemaForm } from '../forms/SchemaForm.js';
import { NodeDiagnostics } from './NodeDiagnostics.js';

/** The config panel's props. */
export interface NodeConfigPanelProps {
  readonly node: RedflowNode;
  /** The last validation's diagnostics about this node. */
  readonly diagnostics: readonly FlowDiagnostic[];
}

/**
 * The side panel of any node but the agent core: its label and a form from its config schema, written
 * straight to the node with `updateNodeData` (so it must be inside the canvas's `ReactFlowProvider`).
 */
export function NodeConfigPanel({ node, diagnostics }: NodeConfigPanelProps) {
  const { updateNodeData } = useReactFlow<RedflowNode, RedflowEdge>();
  const type = flowTypeOf(node);
  const config = node.data.config as Record<string, unknown>;
  const issues = useMemo(() => (isNodeType(type) ? validateNodeConfig(type, config) : []), [type, config]);
  return (
    <div className="config-panel" data-testid="node-config" data-node-id={node.id}>
      <header className="config-panel__head">
        <div>
          <div className="config-panel__type">{type}</div>
          <h2 className="config-panel__id">{node.id}</h2>
          {isNodeType(type) && <div className="muted">{NODE_TYPE_SUMMARY[type]}</div>}
        </div>
        <span className={`chip ${issues.length === 0 ? 'chip--ok' : 'chip--error'}`} data-testid="config-status">
          {issues.length === 0 ? 'valid' : `${issues.length} problem${issues.length === 1 ? '' : 's'}`}
        </span>
      </header>
      <div className="field">
        <label className="field__label" htmlFor={`label-${node.id}`}>
          label
        </label>
        <input
          id={`label-${node.id}`}
          className="field__input"
          value={node.data.label ?? ''}
          placeholder={node.id}
          onChange={(event) => updateNodeData(node.id, { label: event.target.value === '' ? undefined : event.target.value })}
        />
      </div>
      {isNodeType(type) ? (
        <SchemaForm
          schema={configSchemaOf(type)}
          value={config}
          issues={issues}
          onChange={(next) => updateNodeData(node.id, { config: next })}
          hidden={type === NodeType.ModelLlm ? modelFieldsHidden(config, Object.keys(configSchemaOf(type).properties ?? {})) : []}
          testId="config-form"
        />
      ) : (
        <p className="field__error">Unknown node type '{type}': change the flow file, or delete this node.</p>
      )}
      <NodeDiagnostics diagnostics={diagnostics} />
    </div>
  );
}
