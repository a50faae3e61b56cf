/**
 * Why the run on view is not shown over its flow's graph as it ran: its flow is an agent file (no
 * graph), was deleted or renamed (`gone`), or changed after the run.
 */
export interface RunFlow {
  readonly flow: string;
  readonly kind: 'gone' | 'changed' | 'agent';
}

/**
 * The notice under the canvas that says how the run on view relates to the graph shown.
 *
 * @example
 * ```tsx
 * {runFlow && <RunFlowNotice runFlow={runFlow} />}
 * ```
 */
export function RunFlowNotice({ runFlow }: { readonly runFlow: RunFlow }) {
  return (
    <p className={`run-flow-notice run-flow-notice--${runFlow.kind}`} data-testid="run-flow-notice" data-kind={runFlow.kind}>
      {runFlow.kind === 'agent'
        ? `This run is of the agent file ${runFlow.flow}: it has no graph, and its steps are in the side panel.`
        : runFlow.kind === 'gone'
        ? `This run's flow ${runFlow.flow} no longer exists (deleted or renamed). Its log records the agent's settings and tools but not the graph: the run's steps and timeline are shown without it.`
        : `The flow ${runFlow.flow} changed after this run: the canvas shows its current version, which may differ from the graph the run used.`}
    </p>
  );
}
