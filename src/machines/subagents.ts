import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';

/**
 * Subagents as the statechart sees them: tools whose spec says `subagent` (an `agent.ref` node).
 * A call of one runs another flow as a run of its own; the machine only names that run, from the
 * call, so the name is the same when the call is sent again after a crash. Pure: no I/O.
 */

/** How deep subagents may nest below the flow that is run: its subagents are level 1. */
export const MAX_SUBAGENT_DEPTH = 5;

/**
 * The trace id of the run a subagent call starts: the calling run's trace id and the call's
 * iteration (`<traceId>-<iteration>`). One call per iteration, so one child run per call, and a
 * call re-sent after a crash finds the run it started instead of starting another.
 *
 * @example
 * ```ts
 * childTraceIdOf('mb3k1x2a-9f8e7d6c5b4a', 2) // 'mb3k1x2a-9f8e7d6c5b4a-2'
 * ```
 */
export function childTraceIdOf(traceId: string, iteration: number): string {
  return `${traceId}-${iteration}`;
}

/** True when `tool` is a subagent among the run's tools. */
export function isSubagent(tools: readonly ToolSpec[], tool: string): boolean {
  return tools.some((spec) => spec.name === tool && spec.subagent !== undefined);
}

/**
 * The subagent a `delegate` answer's input names, when it is one the agent may call: its
 * `agent_id` is the name of a subagent tool in `allowedTools`. A delegation to any other agent id
 * ends the run `delegate` with its handoff.
 */
export function delegatedSubagent(
  agent: Pick<AgentCoreReactConfig, 'allowedTools'>,
  tools: readonly ToolSpec[],
  input: unknown,
): string | undefined {
  const agentId = typeof input === 'object' && input !== null ? (input as { agent_id?: unknown }).agent_id : undefined;
  if (typeof agentId !== 'string' || !agent.allowedTools.includes(agentId)) return undefined;
  return isSubagent(tools, agentId) ? agentId : undefined;
}

/** What a subagent's call waits beyond its run's timeout: time for the run to record its ending and answer. */
export const SUBAGENT_CALL_MARGIN_MS = 15_000;

/**
 * How long a run waits for its call of a subagent, all attempts together: the subagent's run
 * timeout and {@link SUBAGENT_CALL_MARGIN_MS}. Undefined for a tool that is not a subagent.
 */
export function subagentCallTimeoutMs(tools: readonly ToolSpec[], tool: string): number | undefined {
  const spec = tools.find((candidate) => candidate.name === tool);
  return spec?.subagent === undefined ? undefined : spec.subagent.timeoutMs + SUBAGENT_CALL_MARGIN_MS;
}
