/** The look every custom node shares: a card coloured by its role, with its type, id and a summary line. */
import type { ReactNode } from 'react';
import { useNodeStatus } from '../canvas/canvasStatus.js';
import type { NodeRole } from '../../flows/nodeTypes.js';

/** The card's props, filled in by each node component from its `NodeProps`. */
export interface NodeCardProps {
  /** The node id: shown when there is no label, and the key of its run and validation status. */
  readonly id: string;
  /** Picks the card's colour (its palette group's). */
  readonly role: NodeRole | 'unknown';
  /** The flow node type, shown in the card's head. */
  readonly type: string;
  readonly label: string | undefined;
  readonly selected: boolean;
  readonly icon: string;
  /** One line under the title (the URL, the model, …). */
  readonly summary?: ReactNode;
  /** The node's handles. */
  readonly children?: ReactNode;
}

/** A node's card, marked with its run activity, validation problem and failed call from {@link useNodeStatus}. */
export function NodeCard({ id, role, type, label, selected, icon, summary, children }: NodeCardProps) {
  const { activity, problem, failedCode } = useNodeStatus(id);
  const classes = ['rf-node', `rf-node--${role}`];
  if (selected) classes.push('is-selected');
  if (activity) classes.push(`is-${activity}`);
  if (problem) classes.push(`has-${problem}`);
  if (failedCode) classes.push('has-failed-call');
  return (
    <div
      className={classes.join(' ')}
      data-testid={`node-${id}`}
      data-node-type={type}
      data-activity={activity ?? ''}
      data-problem={problem ?? ''}
      data-failed-code={failedCode ?? ''}
    >
      <div className="rf-node__head">
        <span className="rf-node__icon" aria-hidden="true">
          {icon}
        </span>
        <span className="rf-node__type">{type}</span>
        {problem && (
          <span className={`rf-node__badge rf-node__badge--${problem}`} title={problem === 'error' ? 'has errors' : 'has warnings'}>
            {problem === 'error' ? '!' : '⚠'}
          </span>
        )}
      </div>
      <div className="rf-node__title">{label || id}</div>
      {summary !== undefined && <div className="rf-node__summary">{summary}</div>}
      {failedCode && (
        <div className="rf-node__failure" data-testid={`node-failure-${id}`} title="the last call of this tool failed">
          ✖ {failedCode}
        </div>
      )}
      {children}
    </div>
  );
}
