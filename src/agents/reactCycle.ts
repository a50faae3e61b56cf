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

/**
 * What is wrong with `value` as a {@link ReactCycle} given the names the agent can call, as
 * `[path, message]` pairs (none when it is fine).
 */
export function reactCycleProblems(value: unknown, callable: ReadonlySet<string>): [string, string][] {
  const path = 'promptConfig.reactCycle';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [[path, 'must be { typicalThoughts, actions, doneCriteria, escalationTriggers }']];
  const cycle = value as Record<string, unknown>;
  const problems: [string, string][] = [];
  for (const key of ['typicalThoughts', 'doneCriteria', 'escalationTriggers']) {
    const list = cycle[key];
    if (!Array.isArray(list) || list.some((item) => typeof item !== 'string')) problems.push([`${path}.${key}`, 'must be an array of strings']);
  }
  if (!Array.isArray(cycle.actions)) problems.push([`${path}.actions`, 'must be an array of { name, description }']);
  else {
    cycle.actions.forEach((action: unknown, i) => {
      const name = typeof action === 'object' && action !== null ? (action as { name?: unknown }).name : undefined;
      if (typeof name !== 'string') problems.push([`${path}.actions[${i}]`, 'must be { name, description }']);
      else if (!callable.has(name)) problems.push([`${path}.actions[${i}]`, `names "${name}", which is none of the agent's tools or subagents (${[...callable].join(', ') || 'it has none'})`]);
    });
  }
  return problems;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What is wrong with a definition's `subagents` and its REACT_CYCLE's actions, as `[path, message]`
 * pairs: subagents must be definitions or paths, and each action must name a tool or a subagent
 * (not checked while a subagent is still a path: its name is known once it is loaded).
 */
export function callProblems(definition: Record<string, unknown>): [string, string][] {
  const subagents = definition.subagents === undefined ? [] : definition.subagents;
  if (!Array.isArray(subagents) || subagents.some((entry) => typeof entry !== 'string' && !isObject(entry))) {
    return [['subagents', 'must be an array of agent definitions or paths of .agent.md files and definition modules']];
  }
  const reactCycle = isObject(definition.promptConfig) ? definition.promptConfig.reactCycle : undefined;
  if (reactCycle === undefined || subagents.some((entry) => typeof entry === 'string')) return [];
  const tools: unknown[] = isObject(definition.toolConfig) && Array.isArray(definition.toolConfig.tools) ? definition.toolConfig.tools : [];
  const callable = new Set([...tools, ...subagents].map((entry: unknown) => (isObject(entry) ? String(entry.name) : '')));
  return reactCycleProblems(reactCycle, callable);
}
