/**
 * The agent's way of working, step by step (an `.agent.md` file's `## REACT_CYCLE` section, or a
 * definition's `promptConfig.reactCycle`): kept as data so that what must hold before a final
 * answer (`doneCriteria`) can be checked by a later step, not only read by the model.
 */

/** One action the agent typically takes: it must name one of the agent's tools or subagents. */
export interface ReactCycleAction {
  readonly name: string;
  readonly description: string;
}

/**
 * What the agent asks itself, does, must see hold before it answers, and when it hands over to a
 * person. Each list may be empty.
 *
 * @example
 * ```ts
 * const cycle: ReactCycle = {
 *   typicalThoughts: ['Which inputs reach a dangerous sink?'],
 *   actions: [{ name: 'analyze', description: 'scan the code for risky patterns' }],
 *   doneCriteria: ['Every finding names its line'],
 *   escalationTriggers: ['Credentials are found in the code'],
 * };
 * ```
 */
export interface ReactCycle {
  readonly typicalThoughts: readonly string[];
  readonly actions: readonly ReactCycleAction[];
  readonly doneCriteria: readonly string[];
  readonly escalationTriggers: readonly string[];
}

function bullets(items: readonly string[]): string {
  return items.map((item) => `- ${item}`).join('\n');
}

/**
 * The cycle as instructions for the model, added after the agent's own: thoughts, actions, the
 * criteria that must hold before a final answer, and when to escalate (the `escalate` action).
 * Empty when every list is.
 *
 * @example
 * ```ts
 * reactCycleInstructions({ typicalThoughts: [], actions: [], doneCriteria: ['tests pass'], escalationTriggers: [] });
 * // 'Give your final answer only when all of these hold:\n- tests pass'
 * ```
 */
export function reactCycleInstructions(cycle: ReactCycle): string {
  const parts: string[] = [];
  if (cycle.typicalThoughts.length > 0) parts.push(`Questions to ask yourself at each step:\n${bullets(cycle.typicalThoughts)}`);
  if (cycle.actions.length > 0) parts.push(`Actions you typically take:\n${bullets(cycle.actions.map((action) => `${action.name}: ${action.description}`))}`);
  if (cycle.doneCriteria.length > 0) parts.push(`Give your final answer only when all of these hold:\n${bullets(cycle.doneCriteria)}`);
  if (cycle.escalationTriggers.length > 0) {
    parts.push(`Escalate to a person (the escalate action) instead of going on when:\n${bullets(cycle.escalationTriggers)}`);
  }
  return parts.join('\n\n');
}
