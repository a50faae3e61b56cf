/**
 * What a clicked node did in the run on view, above its config: a tool node's last call (its input,
 * and its output or error) or the model node's last call (the messages it was sent, its raw answer
 * and the verdict on it), as of the scrubber's position. Read from the same step details as the
 * Runtime tab's timeline rows.
 */
import type { IterationDetails, RunDetails } from '../../machines/stepDetails.js';
import { StepDetails, type StepPart } from './StepDetails.js';

/** The node's props: which calls are its own, and the run's steps. */
export interface NodeLastStepProps {
  /** A tool node (by the name the model calls it) or the model node. */
  readonly node: { readonly kind: 'tool'; readonly toolName: string } | { readonly kind: 'model' };
  /** The viewed run's steps, up to the scrubber's position. */
  readonly details: RunDetails;
}

/** The last iteration in which `node` was called, if any. */
export function lastCallOf(node: NodeLastStepProps['node'], iterations: readonly IterationDetails[]): IterationDetails | undefined {
  // A model call is logged as requested before it is answered: every iteration has one.
  return node.kind === 'model' ? iterations.at(-1) : iterations.findLast((it) => it.tool?.tool === node.toolName);
}

/** The node's last call in the viewed run, or a line saying it has none yet. */
export function NodeLastStep({ node, details }: NodeLastStepProps) {
  const last = lastCallOf(node, details.iterations);
  const part: StepPart = node.kind;
  const what = node.kind === 'tool' ? `tool ${node.toolName}` : 'model';
  return (
    <section className="node-last-step" data-testid="node-last-step" data-iteration={last?.iteration ?? ''}>
      <h4 className="section-title">Last call in this run</h4>
      {last ? (
        <StepDetails details={details} iteration={last.iteration} part={part} />
      ) : (
        <p className="empty" data-testid="node-last-step-none">
          {details.ending ? `The run did not call the ${what}.` : `The run has not called the ${what} yet.`}
        </p>
      )}
    </section>
  );
}
