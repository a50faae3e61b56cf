import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { fold } from '../events/evolve.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import { DEFAULT_ANSWER_RESERVE, budgetOf } from '../runtime/contextBudgetFor.js';
import type { ReactStepRequest } from './reactStepTypes.js';
import { sessionTraceId } from './sessionTurns.js';
import type { StepLogs } from './stepLogs.js';

/**
 * The agent a session's query runs as: the client's tools, the iteration limit, and what is left
 * of the session's budget (`session_budget`) as the run's own `budget`.
 *
 * @example
 * ```ts
 * const agent = agentFor(request, tools, 5, { maxTokens: 12_000 });
 * ```
 */
export function agentFor(request: ReactStepRequest, tools: readonly ToolSpec[], maxIterations: number, budget?: AgentCoreReactConfig['budget']): AgentCoreReactConfig {
  const segment = request.available_tools_prompt_segment;
  return {
    strategy: 'react',
    maxIterations,
    allowedTools: tools.map((tool) => tool.name),
    stopConditions: [],
    debug: false,
    // The step's answer carries the model's thought, which the client shows its user: asked for
    // here over the base prompt's "do not explain", in either answer form.
    instructions:
      'Unlike the rule above, begin every answer with one short sentence of reasoning for the user: a "thought" member in the JSON answer.\n' +
      'You may also answer in this form: "Thought: <your reasoning>" then "Action: tool_name(param=\\"value\\")", or "Final Answer: <answer>".' +
      (segment !== undefined && segment.trim() !== '' ? `\n\n${segment}` : ''),
    ...(budget !== undefined && { budget }),
  };
}

/**
 * The context budget of a step's model window (`llm_config.tokenLimit`), when it sets one.
 *
 * @example
 * ```ts
 * const contextBudget = await contextBudgetFor(request); // undefined without tokenLimit
 * ```
 */
export async function contextBudgetFor(request: ReactStepRequest): Promise<ContextBudget | undefined> {
  const { tokenLimit, reservedOutputTokens, modelName } = request.llm_config;
  if (tokenLimit === undefined) return undefined;
  return budgetOf(modelName, tokenLimit, reservedOutputTokens ?? Math.min(DEFAULT_ANSWER_RESERVE, Math.floor(tokenLimit / 4)));
}

/**
 * What the session's earlier queries left of its `session_budget`, as the budget of query
 * `queryNumber`'s run: each earlier query's spending is the fold of its log. Undefined when the
 * session has no budget; an error when nothing is left.
 *
 * @example
 * ```ts
 * const left = await sessionBudgetLeft(request, 3, logs); // { maxTokens: 8_200 } after two queries
 * ```
 */
export async function sessionBudgetLeft(request: ReactStepRequest, queryNumber: number, logs: StepLogs): Promise<AgentCoreReactConfig['budget'] | ErrorInfo | undefined> {
  const limits = request.session_budget;
  if (limits === undefined) return undefined;
  let tokens = 0;
  let cost = 0;
  for (let query = 1; query < queryNumber; query += 1) {
    const traceId = sessionTraceId(request.session_id, query);
    if (!(await logs.exists(traceId))) continue;
    const store = await logs.open(traceId);
    try {
      const usage = fold((await store.read(traceId)).events, traceId).observability.usage;
      tokens += usage?.totalTokens ?? 0;
      cost += usage?.costUsd ?? 0;
    } finally {
      await store.close();
    }
  }
  const budget: NonNullable<AgentCoreReactConfig['budget']> = {};
  if (limits.maxTokens !== undefined) budget.maxTokens = limits.maxTokens - tokens;
  if (limits.maxCost !== undefined) budget.maxCost = limits.maxCost - cost;
  if ((budget.maxTokens ?? 1) >= 1 && (budget.maxCost ?? 1) > 0) return budget;
  return errorInfo(ErrorCode.BUDGET_EXHAUSTED, `the session spent ${tokens} tokens ($${Math.round(cost * 1e6) / 1e6}) of its session_budget: the model was not asked`, {
    hint: 'start a new session, or send a larger session_budget',
  });
}
