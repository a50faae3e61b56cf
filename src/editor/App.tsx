/**
 * The editor: palette, canvas and side panel, the toolbar that talks to `redflow serve`, the run
 * view (live over SSE, or a finished run stepped through with the scrubber) and the statechart.
 */
import { ReactFlowProvider, useEdgesState, useNodesState, useReactFlow } from '@xyflow/react';
import { Suspense, lazy, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { runSteps } from '../machines/runSteps.js';
import type { FlowDiagnostic } from '../flows/diagnostics.js';
import { isCoreType, isModelType, isToolType } from '../flows/nodeTypes.js';
import type { FlowSummary, ValidationResponse } from '../server/apiTypes.js';
import { ApiError, createApiClient } from './api/apiClient.js';
import { loadToken, saveToken } from './api/authToken.js';
import { CanvasStatusContext, type CanvasStatus, type NodeProblem } from './canvas/canvasStatus.js';
import { FlowCanvas } from './canvas/FlowCanvas.js';
import { FIT_VIEW_OPTIONS } from './canvas/fitView.js';
import { Palette } from './canvas/Palette.js';
import { toolNameOf } from './flow/connectedTools.js';
import { flowTypeOf, type AgentCoreNode, type RedflowEdge, type RedflowNode } from './flow/editorNodes.js';
import { emptyFlow, fromFlowDocument, toFlowDocument, type FlowMeta } from './flow/flowDocument.js';
import { useUnsavedChanges } from './flow/unsavedChanges.js';
import { openRunInInspectorLazily, preloadInspector } from './inspector/lazyInspector.js';
import { AgentCorePanel } from './panels/AgentCorePanel.js';
import { AgentTab } from './panels/agentTabs.js';
import { NodeConfigPanel } from './panels/NodeConfigPanel.js';
import { NodeLastStep, type NodeLastStepProps } from './panels/NodeLastStep.js';
import { RuntimeTab } from './panels/RuntimeTab.js';
import { OpenRunContext } from './panels/StepDetails.js';
import { RunsList } from './run/RunsList.js';
import { useRunsList } from './run/useRunsList.js';
import { parseRunInput } from '../flows/runInput.js';
import { activeNodesAfter, failedToolsAfter, runViewAt } from './run/runView.js';
import { RunViewState } from './run/runViewMachine.js';
import { Scrubber } from './run/Scrubber.js';
import { useRunView } from './run/useRunView.js';
import { StatechartView } from './statechart/StatechartView.js';
import { WaitPromptContext, type WaitActions, type WaitPromptState } from './run/WaitPrompt.js';
import { QuestionPrompt } from './run/QuestionPrompt.js';
import { pendingWait } from '../events/pendingWait.js';
import { shownAnswer } from './run/liveAnswer.js';
import { LiveAnswerContext } from './run/LiveAnswerView.js';
import { DiagnosticsPanel } from './toolbar/DiagnosticsPanel.js';
import { Notice, type NoticeMessage } from './toolbar/Notice.js';
import { TokenPrompt } from './toolbar/TokenPrompt.js';
import { Toolbar } from './toolbar/Toolbar.js';

const NEW_FLOW_ID = 'my-flow';

// Forks are shown only for a run on view: their bar is a chunk of its own, off the first load.
const ForkBar = lazy(() => import('./run/ForkBar.js').then((module) => ({ default: module.ForkBar })));

function describe(error: unknown): string {
  if (error instanceof ApiError) return error.info?.hint ? `${error.message} (${error.info.hint})` : error.message;
  return error instanceof Error ? error.message : String(error);
}

function Editor() {
  const [tokenResolver, setTokenResolver] = useState<(token: string | undefined) => void>();
  // Requests answered 401 at the same time share one prompt.
  const pendingToken = useRef<Promise<string | undefined> | undefined>(undefined);
  const api = useMemo(
    () =>
      createApiClient({
        getToken: loadToken,
        requestToken: () =>
          (pendingToken.current ??= new Promise<string | undefined>((resolve) => {
            setTokenResolver(() => (token: string | undefined) => {
              if (token !== undefined) saveToken(token);
              pendingToken.current = undefined;
              setTokenResolver(undefined);
              resolve(token);
            });
          })),
      }),
    [],
  );
  const { fitView } = useReactFlow<RedflowNode, RedflowEdge>();
  const [nodes, setNodes, onNodesChange] = useNodesState<RedflowNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<RedflowEdge>([]);
  const [meta, setMeta] = useState<FlowMeta>(emptyFlow(NEW_FLOW_ID).meta);
  const [flowId, setFlowId] = useState(NEW_FLOW_ID);
  const [flows, setFlows] = useState<readonly FlowSummary[]>([]);
  const [validation, setValidation] = useState<ValidationResponse>();
  const [notice, setNotice] = useState<NoticeMessage>();
  const [tab, setTab] = useState<AgentTab>(AgentTab.General);
  const [busy, setBusy] = useState(false);
  const [snapshot, send] = useRunView(api);
  const { events, position, traceId, problem, flowId: startedFlow, live } = snapshot.context;
  const runState = String(snapshot.value);
  /** The flow as last opened or saved, to tell whether Run must save first. */
  const [lastSaved, setLastSaved] = useState<{ readonly id: string; readonly text: string }>();
  /** The viewed run's flow file is gone, or changed after the run: the run is shown with a notice. */
  const [runFlow, setRunFlow] = useState<{ readonly flow: string; readonly kind: 'gone' | 'changed' | 'agent' }>();

  const say = useCallback((tone: NoticeMessage['tone'], text: string) => setNotice({ tone, text, at: Date.now() }), []);
  const dismissNotice = useCallback(() => setNotice(undefined), []);

  const refreshFlows = useCallback(async () => {
    try {
      setFlows((await api.listFlows()).flows);
    } catch (error) {
      say('error', `Could not list the flows: ${describe(error)}`);
    }
  }, [api, say]);
  const runsFailed = useCallback((error: unknown) => say('error', `Could not list the runs: ${describe(error)}`), [say]);
  // The open flow is the one last opened or saved: its runs are listed.
  const { runs, showAll: showAllRuns, setShowAll: setShowAllRuns, refresh: refreshRuns } = useRunsList(api, lastSaved?.id, runsFailed);

  useEffect(() => {
    void refreshFlows();
  }, [refreshFlows]);
  // Flows and runs change behind the editor (another editor, the command line): coming back to
  // the page lists them again, as does opening the flow menu.
  useEffect(() => {
    const onFocus = () => {
      void refreshFlows();
      void refreshRuns();
    };
    window.addEventListener('focus', onFocus);
    return () => window.removeEventListener('focus', onFocus);
  }, [refreshFlows, refreshRuns]);

  // The flow the canvas was last fitted to, on the workspace as `data-fitted`: fitView waits for the
  // nodes to be measured, so a look at the viewport alone cannot tell a finished fit from one not yet begun.
  const [fittedFlow, setFittedFlow] = useState<string>();
  const fitSoon = useCallback(
    (id?: string) =>
      window.requestAnimationFrame(() => {
        setFittedFlow(undefined);
        void fitView(FIT_VIEW_OPTIONS).then(() => setFittedFlow(id));
      }),
    [fitView],
  );

  const openFlow = useCallback(
    async (id: string) => {
      setBusy(true);
      try {
        const flow = fromFlowDocument(await api.getFlow(id));
        setNodes(flow.nodes);
        setEdges(flow.edges);
        setMeta(flow.meta);
        setFlowId(id);
        setValidation(undefined);
        setLastSaved({ id, text: JSON.stringify(documentOf(flow.meta, id, flow.nodes, flow.edges)) });
        fitSoon(id);
      } catch (error) {
        say('error', `Could not open ${id}: ${describe(error)}`);
      } finally {
        setBusy(false);
      }
    },
    [api, fitSoon, say, setEdges, setNodes],
  );

  const clearFlow = useCallback(() => {
    const flow = emptyFlow(NEW_FLOW_ID);
    setNodes(flow.nodes);
    setEdges(flow.edges);
    setMeta(flow.meta);
    setFlowId(NEW_FLOW_ID);
    setValidation(undefined);
    setLastSaved(undefined);
  }, [setEdges, setNodes]);

  // The run view belongs to the flow on the canvas: leaving the flow leaves its run (which goes on
  // on the server, listed under its flow), so another flow's graph never shows it.
  const leaveRun = useCallback(() => {
    setRunFlow(undefined);
    if (runState === RunViewState.Starting || runState === RunViewState.Streaming) {
      say('info', `The run ${traceId ?? ''} goes on: open it from the runs of ${startedFlow ?? 'its flow'}.`);
    }
    send({ type: 'CLOSE' });
  }, [runState, say, send, startedFlow, traceId]);

  const newFlow = useCallback(() => {
    clearFlow();
    leaveRun();
  }, [clearFlow, leaveRun]);

  const currentDocument = useCallback(() => documentOf(meta, flowId, nodes, edges), [meta, flowId, nodes, edges]);
  // Changed since opened or saved (a flow never saved, since New): its id, name, nodes, layout or edges.
  const dirty = useMemo(() => {
    const clean = lastSaved ?? { id: NEW_FLOW_ID, text: JSON.stringify(documentOf(emptyFlow(NEW_FLOW_ID).meta, NEW_FLOW_ID, [], [])) };
    return clean.id !== flowId.trim() || clean.text !== JSON.stringify(currentDocument());
  }, [currentDocument, flowId, lastSaved]);
  const mayDiscard = useUnsavedChanges(dirty, flowId.trim());

  const save = useCallback(async (): Promise<boolean> => {
    const id = flowId.trim();
    if (id === '') return false;
    setBusy(true);
    try {
      const document = currentDocument();
      const saved = await api.saveFlow(id, document);
      setLastSaved({ id, text: JSON.stringify(document) });
      setValidation(saved.validation);
      say('info', `Saved ${saved.id}${saved.validation.ok ? '' : ' (it does not validate yet: see the problems)'}`);
      void refreshFlows();
      return true;
    } catch (error) {
      say('error', `Could not save: ${describe(error)}`);
      return false;
    } finally {
      setBusy(false);
    }
  }, [api, currentDocument, flowId, refreshFlows, say]);

  // A rename saves the flow as it is under the new id, then deletes the old file.
  const rename = useCallback(async () => {
    const oldId = lastSaved?.id;
    if (oldId === undefined) return;
    const newId = window.prompt(`Rename the flow ${oldId} to:`, oldId)?.trim();
    if (!newId || newId === oldId) return;
    if (flows.some((flow) => flow.id === newId) && !window.confirm(`A flow ${newId} exists already: replace it?`)) return;
    setBusy(true);
    try {
      const document = documentOf(meta, newId, nodes, edges);
      const saved = await api.saveFlow(newId, document);
      await api.deleteFlow(oldId);
      setFlowId(newId);
      setLastSaved({ id: newId, text: JSON.stringify(document) });
      setValidation(saved.validation);
      say('info', `Renamed ${oldId} to ${newId}`);
    } catch (error) {
      say('error', `Could not rename ${oldId}: ${describe(error)}`);
    } finally {
      setBusy(false);
      void refreshFlows();
    }
  }, [api, edges, flows, lastSaved, meta, nodes, refreshFlows, say]);

  const remove = useCallback(async () => {
    const id = lastSaved?.id;
    if (id === undefined || !window.confirm(`Delete the flow ${id}? Its file is removed; its runs stay listed.`)) return;
    setBusy(true);
    try {
      await api.deleteFlow(id);
      newFlow();
      say('info', `Deleted ${id}`);
    } catch (error) {
      say('error', `Could not delete ${id}: ${describe(error)}`);
    } finally {
      setBusy(false);
      void refreshFlows();
    }
  }, [api, lastSaved, newFlow, refreshFlows, say]);

  const validate = useCallback(async () => {
    setBusy(true);
    try {
      setValidation(await api.validate(currentDocument()));
    } catch (error) {
      say('error', `Could not validate: ${describe(error)}`);
    } finally {
      setBusy(false);
    }
  }, [api, currentDocument, say]);

  const selectNode = useCallback((nodeId: string) => setNodes((current) => current.map((node) => (node.selected === (node.id === nodeId) ? node : { ...node, selected: node.id === nodeId }))), [setNodes]);

  const coreNode = nodes.find((node): node is AgentCoreNode => isCoreType(node.type));

  const run = useCallback(
    async (inputText: string) => {
      // Saved only when changed, so running a flow as opened leaves its file (and its layout) alone.
      const unchanged = lastSaved?.id === flowId.trim() && lastSaved.text === JSON.stringify(currentDocument());
      if (!unchanged && !(await save())) return;
      if (coreNode) selectNode(coreNode.id);
      setTab(AgentTab.Runtime);
      setRunFlow(undefined);
      send({ type: 'START', flowId: flowId.trim(), input: parseRunInput(inputText) });
    },
    [coreNode, currentDocument, flowId, lastSaved, save, selectNode, send],
  );

  const openedFlow = useRef<string | undefined>(undefined);

  const openRun = useCallback(
    (id: string) => {
      const summary = runs.find((r) => r.traceId === id);
      const file = summary?.flow === undefined ? undefined : flows.find((flow) => flow.id === summary.flow);
      // An .agent.md agent's run has no graph to show: its steps and timeline only.
      if (file?.kind === 'agent') {
        if (!mayDiscard()) return;
        clearFlow();
        setRunFlow({ flow: file.id, kind: 'agent' });
        send({ type: 'OPEN', traceId: id });
        return;
      }
      if (summary?.flow !== undefined && file === undefined) {
        // Its flow was deleted or renamed: the log keeps the agent's settings and tools, not the
        // graph, so the run is shown without a canvas rather than over another flow's.
        if (!mayDiscard()) return;
        clearFlow();
        setRunFlow({ flow: summary.flow, kind: 'gone' });
        send({ type: 'OPEN', traceId: id });
        return;
      }
      setRunFlow(file && summary && Date.parse(file.updatedAt) > Date.parse(summary.startedAt) ? { flow: file.id, kind: 'changed' } : undefined);
      if (summary?.flow && summary.flow !== flowId && openedFlow.current !== summary.flow) {
        if (!mayDiscard()) return;
        openedFlow.current = summary.flow;
        void openFlow(summary.flow).finally(() => (openedFlow.current = undefined));
      }
      if (coreNode) selectNode(coreNode.id);
      setTab(AgentTab.Runtime);
      send({ type: 'OPEN', traceId: id });
    },
    [clearFlow, coreNode, flowId, flows, mayDiscard, openFlow, runs, selectNode, send],
  );

  // A run is listed from its start (the server lists it once it is under way) and again when it
  // ends, failed included, without waiting for ↻.
  useEffect(() => {
    if (runState === RunViewState.Streaming || runState === RunViewState.Finished || runState === RunViewState.Failed) void refreshRuns();
    if (runState === RunViewState.Failed && problem) say('error', `Run: ${problem}`);
  }, [runState, problem, refreshRuns, say]);

  // Failed with no trace id: the server refused the START, so the run has no log to list.
  const failedStart = runState === RunViewState.Failed && traceId === undefined && startedFlow !== undefined ? { flowId: startedFlow, problem: problem ?? 'the run did not start' } : undefined;

  const steps = useMemo(() => runSteps(events), [events]);
  // A run is shown, so "Open in inspector" may be clicked: have its chunk ready by then.
  const hasEvents = events.length > 0;
  useEffect(() => {
    if (hasEvents) void preloadInspector();
  }, [hasEvents]);
  const view = useMemo(() => runViewAt(steps, position), [steps, position]);
  const highlightNodes = useMemo(() => nodes.map((node) => ({ id: node.id, type: flowTypeOf(node), toolName: toolNameOf(node) })), [nodes]);
  const activity = useMemo(() => activeNodesAfter(view.step?.event, highlightNodes), [view.step, highlightNodes]);
  const failedTools = useMemo(() => failedToolsAfter(steps.slice(0, view.index + 1).map((item) => item.event), highlightNodes), [steps, view.index, highlightNodes]);
  // A run on view that waits (at its last step, not a scrubbed-back one): the tool node it waits at
  // shows the prompt, and a question to a person is asked at the top of the side panel.
  const waitPrompt = useMemo((): WaitPromptState | undefined => {
    if (traceId === undefined || view.index !== steps.length - 1) return undefined;
    const wait = pendingWait(events);
    if (!wait) return undefined;
    const node = highlightNodes.find((candidate) => isToolType(candidate.type) && (candidate.toolName ?? candidate.id) === wait.tool);
    if (!node && wait.kind !== 'human') return undefined;
    // Each answer names the wait it is for, so one given late (the run went on meanwhile) is refused.
    const actions: WaitActions = {
      decide: async (approved, reason) => {
        await api.answerApproval(traceId, { decision: approved ? 'approve' : 'deny', idempotencyKey: wait.idempotencyKey, ...(reason !== undefined && { reason }) });
      },
      answer: async (text) => {
        await api.answerQuestion(traceId, { text, idempotencyKey: wait.idempotencyKey });
      },
      sendResult: async (result) => {
        const body = result.ok ? { ok: true as const, output: result.output } : { ok: false as const, error: { message: result.message } };
        await api.sendToolResult(traceId, { ...body, idempotencyKey: wait.idempotencyKey });
      },
    };
    return { nodeId: node?.id, wait, actions };
  }, [api, events, highlightNodes, steps.length, traceId, view.index]);

  // A validation describes the graph it was made for: adding or removing a node or an edge makes it stale.
  const graphShape = `${nodes.map((node) => node.id).join(',')}|${edges.map((edge) => edge.id).join(',')}`;
  const validatedShape = useRef(graphShape);
  useEffect(() => {
    if (validatedShape.current !== graphShape) setValidation(undefined);
  }, [graphShape]);
  useEffect(() => {
    if (validation) validatedShape.current = graphShape;
  }, [validation, graphShape]);

  // The model's answer, as it is written and once logged, while the run is followed live.
  const answer = useMemo(() => (runState === RunViewState.Streaming ? shownAnswer(live, events) : undefined), [events, live, runState]);

  const problems = useMemo(() => {
    const map = new Map<string, NodeProblem>();
    for (const d of validation?.warnings ?? []) if (d.nodeId) map.set(d.nodeId, 'warning');
    for (const d of validation?.errors ?? []) if (d.nodeId) map.set(d.nodeId, 'error');
    return map;
  }, [validation]);
  const canvasStatus = useMemo((): CanvasStatus => ({ activity, problems, failedTools }), [activity, problems, failedTools]);

  const diagnosticsOf = useCallback(
    (nodeId: string): FlowDiagnostic[] => [...(validation?.errors ?? []), ...(validation?.warnings ?? [])].filter((d) => d.nodeId === nodeId),
    [validation],
  );

  const selected = nodes.filter((node) => node.selected);
  const panelNode = selected.length === 1 ? selected[0] : selected.length === 0 ? coreNode : undefined;
  const running = runState === RunViewState.Starting || runState === RunViewState.Streaming;
  const scrubbing = (runState === RunViewState.Finished || runState === RunViewState.Replay) && steps.length > 0;
  // A model or tool node clicked while a run is on view shows its last call in that run.
  const runNode = useMemo((): NodeLastStepProps['node'] | undefined => {
    if (!panelNode || steps.length === 0) return undefined;
    const type = flowTypeOf(panelNode);
    if (isModelType(type)) return { kind: 'model' };
    return isToolType(type) ? { kind: 'tool', toolName: toolNameOf(panelNode) ?? panelNode.id } : undefined;
  }, [panelNode, steps.length]);

  return (
    <LiveAnswerContext.Provider value={answer}>
      <WaitPromptContext.Provider value={waitPrompt}>
        <div className="app" data-testid="editor" data-run-state={runState}>
          <Toolbar
            flows={flows}
            flowId={flowId}
            flowName={meta.name ?? ''}
            busy={busy}
            running={running}
            canInspect={events.length > 0}
            onFlowIdChange={setFlowId}
            onFlowNameChange={(name) => setMeta((current) => ({ ...current, name }))}
            dirty={dirty}
            onOpen={(id) => {
              if (!mayDiscard()) return;
              leaveRun();
              void openFlow(id);
            }}
            onRunAgent={(id) => {
              if (!mayDiscard()) return;
              leaveRun();
              clearFlow();
              // An agent file runs with no inputs from here; the API takes them (POST /api/runs).
              setRunFlow({ flow: id, kind: 'agent' });
              api.startRun({ flow: id, input: {} }).then(
                (started) => send({ type: 'OPEN', traceId: started.traceId }),
                (error: unknown) => say('error', `Could not run ${id}: ${describe(error)}`),
              );
            }}
            onPickerOpen={() => void refreshFlows()}
            onNew={() => mayDiscard() && newFlow()}
            onSave={() => void save()}
            onValidate={() => void validate()}
            saved={lastSaved !== undefined}
            onRename={() => void rename()}
            onDelete={() => void remove()}
            onRun={(input) => void run(input)}
            onAbort={() => send({ type: 'ABORT' })}
            onInspect={() => void openRunInInspectorLazily(events)}
          />
          <aside className="sidebar sidebar--left">
            <Palette />
            <RunsList
              runs={runs}
              currentTraceId={traceId}
              showAll={showAllRuns}
              onShowAllChange={setShowAllRuns}
              onOpen={openRun}
              onRefresh={() => void refreshRuns()}
              failedStart={failedStart}
            />
          </aside>
          <main className="workspace" data-fitted={fittedFlow}>
            <CanvasStatusContext.Provider value={canvasStatus}>
              <FlowCanvas nodes={nodes} edges={edges} onNodesChange={onNodesChange} onEdgesChange={onEdgesChange} setNodes={setNodes} setEdges={setEdges} />
            </CanvasStatusContext.Provider>
            {nodes.length === 0 && runFlow?.kind !== 'gone' && runFlow?.kind !== 'agent' && (
              <div className="canvas-hint" data-testid="canvas-hint">
                Drag nodes from the palette: an <strong>input</strong>, an <strong>agent.core</strong>, a <strong>model</strong>, some <strong>tools</strong> and an{' '}
                <strong>output</strong>. Then connect the core’s handles to them.
              </div>
            )}
            <div className="workspace__bottom">
              <Notice notice={notice} onDismiss={dismissNotice} />
              {runFlow && (
                <p className={`run-flow-notice run-flow-notice--${runFlow.kind}`} data-testid="run-flow-notice" data-kind={runFlow.kind}>
                  {runFlow.kind === 'agent'
                    ? `This run is of the agent file ${runFlow.flow}: it has no graph, and its steps are in the side panel.`
                    : runFlow.kind === 'gone'
                    ? `This run's flow ${runFlow.flow} no longer exists (deleted or renamed). Its log records the agent's settings and tools but not the graph: the run's steps and timeline are shown without it.`
                    : `The flow ${runFlow.flow} changed after this run: the canvas shows its current version, which may differ from the graph the run used.`}
                </p>
              )}
              <DiagnosticsPanel validation={validation} onSelectNode={selectNode} onClose={() => setValidation(undefined)} />
              {scrubbing && <Scrubber steps={steps} index={view.index} onScrub={(next) => send({ type: 'SCRUB', position: next })} />}
              {scrubbing && traceId !== undefined && (
                <Suspense fallback={null}>
                  <ForkBar
                    api={api}
                    traceId={traceId}
                    events={events}
                    iteration={view.step?.event.iteration ?? 0}
                    onOpen={(id) => {
                      // A new fork is listed from now on; the parent is opened as the list opens it.
                      void refreshRuns();
                      openRun(id);
                    }}
                    onError={(what, error) => say('error', `${what}: ${describe(error)}`)}
                  />
                </Suspense>
              )}
            </div>
          </main>
          <aside className="sidebar sidebar--right">
            <StatechartView current={view.state} previous={view.previous?.state} />
            {/* A subagent's call in the step details opens the run it started, as the runs list does. */}
            <OpenRunContext.Provider value={openRun}>
              <div className="side-panel" data-testid="side-panel">
                <QuestionPrompt />
                {panelNode && isCoreType(panelNode.type) ? (
                  <AgentCorePanel
                    node={panelNode as AgentCoreNode}
                    nodes={nodes}
                    edges={edges}
                    diagnostics={diagnosticsOf(panelNode.id)}
                    tab={tab}
                    onTabChange={setTab}
                    view={view}
                    runState={runState}
                    traceId={traceId}
                    onSelectNode={selectNode}
                  />
                ) : runFlow?.kind === 'gone' || runFlow?.kind === 'agent' ? (
                  <RuntimeTab view={view} runState={runState} traceId={traceId} />
                ) : panelNode ? (
                  <>
                    {runNode && <NodeLastStep node={runNode} details={view.details} />}
                    <NodeConfigPanel node={panelNode} diagnostics={diagnosticsOf(panelNode.id)} />
                  </>
                ) : (
                  <p className="empty">{selected.length > 1 ? `${selected.length} nodes selected.` : 'Add an agent.core to configure the agent, or select a node.'}</p>
                )}
              </div>
            </OpenRunContext.Provider>
          </aside>
          {tokenResolver && <TokenPrompt onSubmit={(token) => tokenResolver(token)} onCancel={() => tokenResolver(undefined)} />}
        </div>
      </WaitPromptContext.Provider>
    </LiveAnswerContext.Provider>
  );
}

/**
 * The editor app. It only provides React Flow's store, which the editor itself needs (`useReactFlow`
 * for `fitView`, and the panels' `updateNodeData`) and so cannot create.
 */
export function App() {
  return (
    <ReactFlowProvider>
      <Editor />
    </ReactFlowProvider>
  );
}

/** The flow document the editor holds, with the id it is saved under. */
function documentOf(meta: FlowMeta, flowId: string, nodes: readonly RedflowNode[], edges: readonly RedflowEdge[]) {
  // A flow's id is the path it is saved under (the server writes it so for every client): the
  // document says so too, so what the editor compares with the file is what the file holds.
  return toFlowDocument({ ...meta, id: flowId.trim() }, nodes, edges);
}
