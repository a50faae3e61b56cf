import type { AgentCoreReactConfig, ToolSpec, WaitStart } from '../contracts/schema-types.js';

/**
 * When a run waits for an answer from outside, and for how long. Three kinds of wait: a person
 * approving or denying a call (`requiresApproval` in the agent config), the client running a
 * tool itself (`executor: "client"` on its spec), and a person answering the model's question
 * (its `escalate` and `request_info` actions). Pure: the statechart decides with these, and the
 * log records the decision (`wait` on `tool.requested` / `tool.approved`), so readers of the log
 * never need the config to know a run waits.
 */

/** How long a run waits for an answer unless the agent's `waitTimeoutMs` says otherwise: one day. */
export const DEFAULT_WAIT_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** What a wait is for: a person's decision on a call, the result of a call the client runs, or a person's answer to the model's question. */
export type WaitKind = WaitStart['for'];

/** The agent's wait deadline, in ms after the event that starts the wait. */
export function waitTimeoutOf(agent: Pick<AgentCoreReactConfig, 'waitTimeoutMs'>): number {
  return agent.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
}

/** True when every call of `tool` waits for a person's approval first. */
export function needsApproval(agent: Pick<AgentCoreReactConfig, 'requiresApproval'>, tool: string): boolean {
  return agent.requiresApproval?.includes(tool) === true;
}

/** True when `tool` is run by the client, not by Redflow. */
export function runsOnClient(tools: readonly ToolSpec[], tool: string): boolean {
  return tools.some((spec) => spec.name === tool && spec.executor === 'client');
}

/** The wait that follows a call's `tool.requested`: approval first, else the client's result, else none. */
export function waitAfterRequest(
  agent: Pick<AgentCoreReactConfig, 'requiresApproval' | 'waitTimeoutMs'>,
  tools: readonly ToolSpec[],
  tool: string,
): WaitStart | undefined {
  if (needsApproval(agent, tool)) return { for: 'approval', timeoutMs: waitTimeoutOf(agent) };
  if (runsOnClient(tools, tool)) return { for: 'client', timeoutMs: waitTimeoutOf(agent) };
  return undefined;
}

/** The wait that follows an approved call's `tool.approved`: the client's result, for a client tool. */
export function waitAfterApproval(
  agent: Pick<AgentCoreReactConfig, 'waitTimeoutMs'>,
  tools: readonly ToolSpec[],
  tool: string,
): WaitStart | undefined {
  return runsOnClient(tools, tool) ? { for: 'client', timeoutMs: waitTimeoutOf(agent) } : undefined;
}

/** The wait that follows the model's question to a person (`human.requested`). */
export function waitForHuman(agent: Pick<AgentCoreReactConfig, 'waitTimeoutMs'>): WaitStart {
  return { for: 'human', timeoutMs: waitTimeoutOf(agent) };
}
