import { useMemo } from 'react';
import type { AgentEvent } from '../../events/eventTypes.js';
import { pendingWait } from '../../events/pendingWait.js';
import { isToolType } from '../../flows/nodeTypes.js';
import type { ApiClient } from '../api/apiClient.js';
import type { HighlightNode } from './runView.js';
import type { WaitActions, WaitPromptState } from './WaitPrompt.js';

/** The run on view, as far as its wait prompt needs it. */
export interface WaitingRun {
  readonly traceId: string | undefined;
  readonly events: readonly AgentEvent[];
  /** True when the step on view is the run's last (a scrubbed-back step never prompts). */
  readonly atLastStep: boolean;
}

/**
 * What the editor prompts for when the run on view waits at its last step: the tool node it waits
 * at shows the prompt, and a question to a person is asked at the top of the side panel. Each
 * answer names the wait it is for, so one given late (the run went on meanwhile) is refused.
 *
 * @example
 * ```tsx
 * const waitPrompt = useWaitPrompt(api, { traceId, events, atLastStep: view.index === steps.length - 1 }, highlightNodes);
 * return <WaitPromptContext.Provider value={waitPrompt}>…</WaitPromptContext.Provider>;
 * ```
 */
export function useWaitPrompt(api: ApiClient, run: WaitingRun, nodes: readonly HighlightNode[]): WaitPromptState | undefined {
  const { traceId, events, atLastStep } = run;
  return useMemo((): WaitPromptState | undefined => {
    if (traceId === undefined || !atLastStep) return undefined;
    const wait = pendingWait(events);
    if (!wait) return undefined;
    const node = nodes.find((candidate) => isToolType(candidate.type) && (candidate.toolName ?? candidate.id) === wait.tool);
    if (!node && wait.kind !== 'human') return undefined;
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
  }, [api, events, nodes, atLastStep, traceId]);
}
