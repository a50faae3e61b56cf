/**
 * The editor: palette, canvas and side panel, the toolbar that talks to `redflow serve`, the run
 * view (live over SSE, or a finished run stepped through with the scrubber) and the statechart.
 */
import { ReactFlowProvider, useEdgesState, useNodesState, useReactFlow } from '@xyflow/react';
import { Suspense, lazy, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { runSteps } from '../machines/runSteps.js';
import { isCoreType } from '../flows/nodeTypes.js';
import type { FlowSummary } from '../server/apiTypes.js';
import { ApiError } from './api/apiClient.js';
import { useTokenPromptApi } from './api/useTokenPromptApi.js';
import { CanvasStatusContext, type CanvasStatus } from './canvas/canvasStatus.js';
import { FlowCanvas } from './canvas/FlowCanvas.js';
import { FIT_VIEW_OPTIONS } from './canvas/fitView.js';
import { Palette } from './canvas/Palette.js';
import { useValidationMarks } from './canvas/useValidationMarks.js';
import { toolNameOf } from './flow/connectedTools.js';
import { flowTypeOf, type AgentCoreNode, type RedflowEdge, type RedflowNode } from './flow/editorNodes.js';
import { useFlowFile } from './flow/useFlowFile.js';
import { useUnsavedChanges } from './flow/unsavedChanges.js';
import { openRunInInspectorLazily, preloadInspector } from './inspector/lazyInspector.js';
import { AgentTab } from './panels/agentTabs.js';
import { SidePanel } from './panels/SidePanel.js';
import { OpenRunContext } from './panels/StepDetails.js';
import { RunsList } from './run/RunsList.js';
import { useRunsList } from './run/useRunsList.js';
import { parseRunInput } from '../flows/runInput.js';
import { activeNodesAfter, failedToolsAfter, runViewAt } from './run/runView.js';
import { RunViewState } from './run/runViewMachine.js';
import { Scrubber } from './run/Scrubber.js';
import { useRunView } from './run/useRunView.js';
import { StatechartView } from './statechart/StatechartView.js';
import { WaitPromptContext } from './run/WaitPrompt.js';
import { useWaitPrompt } from './run/useWaitPrompt.js';
import { RunFlowNotice, type RunFlow } from './run/RunFlowNotice.js';
import { shownAnswer } from './run/liveAnswer.js';
import { LiveAnswerContext } from './run/LiveAnswerView.js';
import { DiagnosticsPanel } from './toolbar/DiagnosticsPanel.js';
import { Notice, type NoticeMessage } from './toolbar/Notice.js';
import { TokenPrompt } from './toolbar/TokenPrompt.js';
import { Toolbar } from './toolbar/Toolbar.js';

// Forks are shown only for a run on view: their bar is a chunk of its own, off the first load.
const ForkBar = lazy(() => import('./run/ForkBar.js').then((module) => ({ default: module.ForkBar })));

function describe(error: unknown): string {
  if (error instanceof ApiError) return error.info?.hint ? `${error.message} (${error.info.hint})` : error.message;
  return error instanceof Error ? error.message : String(error);
}

function Editor() {
  const { api, tokenResolver } = useTokenPromptApi();
  const { fitView } = useReactFlow<RedflowNode, RedflowEdge>();
  const [nodes, setNodes, onNodesChange] = useNodesState<RedflowNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<RedflowEdge>([]);
  const [flows, setFlows] = useState<readonly FlowSummary[]>([]);
  const [notice, setNotice] = useState<NoticeMessage>();
  const [tab, setTab] = useState<AgentTab>(AgentTab.General);
  const [busy, setBusy] = useState(false);
  const [snapshot, send] = useRunView(api);
  const { events, position, traceId, problem, flowId: startedFlow, live } = snapshot.context;
  const runState = String(snapshot.value);
  /** The viewed run's flow file is gone, or changed after the run: the run is shown with a notice. */
  const [runFlow, setRunFlow] = useState<RunFlow>();

  const say = useCallback((tone: NoticeMessage['tone'], text: string) => setNotice({ tone, text, at: Date.now() }), []);
  const dismissNotice = useCallback(() => setNotice(undefined), []);

  /** Runs `work` with the toolbar busy; its failure is told as `failure: why` and ends it with undefined. */
  const whileBusy = useCallback(
    async <T,>(failure: string, work: () => Promise<T>, after?: () => void): Promise<T | undefined> => {
      setBusy(true);
      try {
        return await work();
      } catch (error) {
        say('error', `${failure}: ${describe(error)}`);
        return undefined;
      } finally {
        setBusy(false);
        after?.();
      }
    },
    [say],
  );

  const refreshFlows = useCallback(async () => {
    try {
      setFlows((await api.listFlows()).flows);
    } catch (error) {
      say('error', `Could not list the flows: ${describe(error)}`);
    }
  }, [api, say]);
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

  // The run view belongs to the flow on the canvas: leaving the flow leaves its run (which goes on
  // on the server, listed under its flow), so another flow's graph never shows it.
  const leaveRun = useCallback(() => {
    setRunFlow(undefined);
    if (runState === RunViewState.Starting || runState === RunViewState.Streaming) {
      say('info', `The run ${traceId ?? ''} goes on: open it from the runs of ${startedFlow ?? 'its flow'}.`);
    }
    send({ type: 'CLOSE' });
  }, [runState, say, send, startedFlow, traceId]);

  const { meta, setMeta, flowId, setFlowId, validation, setValidation, lastSaved, dirty, openFlow, clearFlow, save, saveIfChanged, rename, remove, validate } = useFlowFile({
    api,
    nodes,
    edges,
    setNodes,
    setEdges,
    flows,
    refreshFlows,
    whileBusy,
    say,
    fitSoon,
    onDeleted: leaveRun,
  });
  const mayDiscard = useUnsavedChanges(dirty, flowId.trim());
  const newFlow = useCallback(() => {
    clearFlow();
    leaveRun();
  }, [clearFlow, leaveRun]);

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


  const selectNode = useCallback((nodeId: string) => setNodes((current) => current.map((node) => (node.selected === (node.id === nodeId) ? node : { ...node, selected: node.id === nodeId }))), [setNodes]);

  const coreNode = nodes.find((node): node is AgentCoreNode => isCoreType(node.type));

  const run = useCallback(
    async (inputText: string) => {
      if (!(await saveIfChanged())) return;
      if (coreNode) selectNode(coreNode.id);
      setTab(AgentTab.Runtime);
      setRunFlow(undefined);
      send({ type: 'START', flowId: flowId.trim(), input: parseRunInput(inputText) });
    },
    [coreNode, flowId, saveIfChanged, selectNode, send],
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
  const waitPrompt = useWaitPrompt(api, { traceId, events, atLastStep: view.index === steps.length - 1 }, highlightNodes);

  const clearValidation = useCallback(() => setValidation(undefined), []);
  const { problems, diagnosticsOf } = useValidationMarks(validation, nodes, edges, clearValidation);

  // The model's answer, as it is written and once logged, while the run is followed live.
  const answer = useMemo(() => (runState === RunViewState.Streaming ? shownAnswer(live, events) : undefined), [events, live, runState]);

  const canvasStatus = useMemo((): CanvasStatus => ({ activity, problems, failedTools }), [activity, problems, failedTools]);

  const selected = nodes.filter((node) => node.selected);
  const panelNode = selected.length === 1 ? selected[0] : selected.length === 0 ? coreNode : undefined;
  const running = runState === RunViewState.Starting || runState === RunViewState.Streaming;
  const scrubbing = (runState === RunViewState.Finished || runState === RunViewState.Replay) && steps.length > 0;

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
              {runFlow && <RunFlowNotice runFlow={runFlow} />}
              <DiagnosticsPanel validation={validation} onSelectNode={selectNode} onClose={clearValidation} />
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
              <SidePanel
                panelNode={panelNode}
                selectedCount={selected.length}
                hasSteps={steps.length > 0}
                graphless={runFlow?.kind === 'gone' || runFlow?.kind === 'agent'}
                diagnosticsOf={diagnosticsOf}
                nodes={nodes}
                edges={edges}
                tab={tab}
                onTabChange={setTab}
                view={view}
                runState={runState}
                traceId={traceId}
                onSelectNode={selectNode}
              />
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
