import { useCallback, useMemo, useState } from 'react';
import type { FlowSummary, ValidationResponse } from '../../server/apiTypes.js';
import type { ApiClient } from '../api/apiClient.js';
import type { NoticeMessage } from '../toolbar/Notice.js';
import type { RedflowEdge, RedflowNode } from './editorNodes.js';
import { emptyFlow, fromFlowDocument, toFlowDocument, type FlowMeta } from './flowDocument.js';

/** The id a new flow is saved under until it is given one. */
export const NEW_FLOW_ID = 'my-flow';

/** What {@link useFlowFile} works with: the canvas's graph, the server, and how the editor tells things. */
export interface FlowFileOptions {
  readonly api: ApiClient;
  readonly nodes: readonly RedflowNode[];
  readonly edges: readonly RedflowEdge[];
  readonly setNodes: (nodes: RedflowNode[]) => void;
  readonly setEdges: (edges: RedflowEdge[]) => void;
  /** The flows on the server, to ask before a rename replaces one. */
  readonly flows: readonly FlowSummary[];
  readonly refreshFlows: () => Promise<void>;
  /** Runs server work with the toolbar busy, telling its failure as `failure: why`. */
  readonly whileBusy: <T>(failure: string, work: () => Promise<T>, after?: () => void) => Promise<T | undefined>;
  readonly say: (tone: NoticeMessage['tone'], text: string) => void;
  /** Fits the canvas to the flow opened. */
  readonly fitSoon: (id?: string) => void;
  /** The flow on the canvas was deleted (and the canvas cleared): the editor leaves what it showed of it. */
  readonly onDeleted: () => void;
}

/**
 * The flow file on the canvas: its id, name and last validation, and opening, clearing, saving,
 * renaming, deleting and validating it on the server. `dirty` tells whether the canvas changed
 * since it was opened or saved (a flow never saved, since New).
 *
 * @example
 * ```ts
 * const file = useFlowFile({ api, nodes, edges, setNodes, setEdges, flows, refreshFlows, whileBusy, say, fitSoon, onDeleted: newFlow });
 * await file.openFlow('support-agent');
 * ```
 */
export function useFlowFile(options: FlowFileOptions) {
  const { api, nodes, edges, setNodes, setEdges, flows, refreshFlows, whileBusy, say, fitSoon, onDeleted } = options;
  const [meta, setMeta] = useState<FlowMeta>(emptyFlow(NEW_FLOW_ID).meta);
  const [flowId, setFlowId] = useState(NEW_FLOW_ID);
  const [validation, setValidation] = useState<ValidationResponse>();
  /** The flow as last opened or saved, to tell whether Run must save first. */
  const [lastSaved, setLastSaved] = useState<{ readonly id: string; readonly text: string }>();

  const openFlow = useCallback(
    (id: string) =>
      whileBusy(`Could not open ${id}`, async () => {
        const flow = fromFlowDocument(await api.getFlow(id));
        setNodes(flow.nodes);
        setEdges(flow.edges);
        setMeta(flow.meta);
        setFlowId(id);
        setValidation(undefined);
        setLastSaved({ id, text: JSON.stringify(documentOf(flow.meta, id, flow.nodes, flow.edges)) });
        fitSoon(id);
      }),
    [api, fitSoon, setEdges, setNodes, whileBusy],
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

  const currentDocument = useCallback(() => documentOf(meta, flowId, nodes, edges), [meta, flowId, nodes, edges]);
  // Changed since opened or saved (a flow never saved, since New): its id, name, nodes, layout or edges.
  const dirty = useMemo(() => {
    const clean = lastSaved ?? { id: NEW_FLOW_ID, text: JSON.stringify(documentOf(emptyFlow(NEW_FLOW_ID).meta, NEW_FLOW_ID, [], [])) };
    return clean.id !== flowId.trim() || clean.text !== JSON.stringify(currentDocument());
  }, [currentDocument, flowId, lastSaved]);

  const save = useCallback(async (): Promise<boolean> => {
    const id = flowId.trim();
    if (id === '') return false;
    const savedOk = await whileBusy('Could not save', async () => {
      const document = currentDocument();
      const saved = await api.saveFlow(id, document);
      setLastSaved({ id, text: JSON.stringify(document) });
      setValidation(saved.validation);
      say('info', `Saved ${saved.id}${saved.validation.ok ? '' : ' (it does not validate yet: see the problems)'}`);
      void refreshFlows();
      return true;
    });
    return savedOk ?? false;
  }, [api, currentDocument, flowId, refreshFlows, say, whileBusy]);

  // A rename saves the flow as it is under the new id, then deletes the old file.
  const rename = useCallback(async () => {
    const oldId = lastSaved?.id;
    if (oldId === undefined) return;
    const newId = window.prompt(`Rename the flow ${oldId} to:`, oldId)?.trim();
    if (!newId || newId === oldId) return;
    if (flows.some((flow) => flow.id === newId) && !window.confirm(`A flow ${newId} exists already: replace it?`)) return;
    const refresh = () => void refreshFlows();
    await whileBusy(
      `Could not rename ${oldId}`,
      async () => {
        const document = documentOf(meta, newId, nodes, edges);
        const saved = await api.saveFlow(newId, document);
        await api.deleteFlow(oldId);
        setFlowId(newId);
        setLastSaved({ id: newId, text: JSON.stringify(document) });
        setValidation(saved.validation);
        say('info', `Renamed ${oldId} to ${newId}`);
      },
      refresh,
    );
  }, [api, edges, flows, lastSaved, meta, nodes, refreshFlows, say, whileBusy]);

  const remove = useCallback(async () => {
    const id = lastSaved?.id;
    if (id === undefined || !window.confirm(`Delete the flow ${id}? Its file is removed; its runs stay listed.`)) return;
    const refresh = () => void refreshFlows();
    await whileBusy(
      `Could not delete ${id}`,
      async () => {
        await api.deleteFlow(id);
        clearFlow();
        onDeleted();
        say('info', `Deleted ${id}`);
      },
      refresh,
    );
  }, [api, clearFlow, lastSaved, onDeleted, refreshFlows, say, whileBusy]);

  const validate = useCallback(
    () => whileBusy('Could not validate', async () => setValidation(await api.validate(currentDocument()))),
    [api, currentDocument, whileBusy],
  );

  /** Saves the flow unless it is as opened or saved, so running it leaves its file (and its layout) alone. */
  const saveIfChanged = useCallback(async (): Promise<boolean> => {
    const unchanged = lastSaved?.id === flowId.trim() && lastSaved.text === JSON.stringify(currentDocument());
    return unchanged || save();
  }, [currentDocument, flowId, lastSaved, save]);

  return { meta, setMeta, flowId, setFlowId, validation, setValidation, lastSaved, dirty, openFlow, clearFlow, save, saveIfChanged, rename, remove, validate };
}

/** The flow document the editor holds, with the id it is saved under. */
function documentOf(meta: FlowMeta, flowId: string, nodes: readonly RedflowNode[], edges: readonly RedflowEdge[]) {
  // A flow's id is the path it is saved under (the server writes it so for every client): the
  // document says so too, so what the editor compares with the file is what the file holds.
  return toFlowDocument({ ...meta, id: flowId.trim() }, nodes, edges);
}
