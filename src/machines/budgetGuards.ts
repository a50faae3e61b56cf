import type { RecordedFact } from '../events/eventTypes.js';
import { AgentEventType } from '../events/eventTypes.js';
import { evolve } from '../events/evolve.js';
import { modelMessages } from './prompt.js';
import type { ReactContext } from './reactTypes.js';
import { budgetStop, inputTokensOf } from './runBudget.js';

/**
 * The REACT statechart's budget checks (agent `budget`, docs/budgets.md), read off the context
 * alone: what the run spent is the fold of its log's usage, and the next request's input is
 * counted with the budget's tokenizer from the messages the request would send. Kept beside the
 * chart's setup so its guards stay one line each.
 */

/** The data of `run.started` for the run the context describes. */
export function runStartedFact(context: ReactContext): RecordedFact {
  const { run, agent, tools, timeoutMs } = context.settings;
  const data: Extract<RecordedFact, { type: 'run.started' }>['data'] = {
    input: run.input,
    startedAt: run.startedAt,
    agent,
    tools: [...tools],
    ...(run.memory !== undefined && { memory: run.memory }),
    ...(run.conversationId !== undefined && { conversationId: run.conversationId }),
    ...(run.flow !== undefined && { flow: run.flow }),
    // Kept for a run resumed after a wait: each stretch of its work gets the same bound.
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(run.history !== undefined && { history: [...run.history] }),
    ...(run.context !== undefined && { context: run.context }),
    ...(run.parent !== undefined && { parent: run.parent }),
  };
  return { type: AgentEventType.RunStarted, iteration: 0, data };
}

/** The input tokens of the model request the context would send now (its messages as `sendModelRequest` builds them). */
export function nextRequestTokens(context: ReactContext, envelope = context.envelope): number {
  const { budget, systemPrompt, contextBudget } = context.settings;
  if (budget === undefined) return 0;
  return inputTokensOf(modelMessages(systemPrompt, envelope, contextBudget).messages, budget);
}

/** Why the next model call may not be made (spent, or its input alone overspends), or undefined. */
export function nextCallBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  return budget === undefined ? undefined : budgetStop(budget, context.envelope, nextRequestTokens(context));
}

/** Why a new run's first call may not be made: counted on the envelope as it will be once `run.started` is recorded. */
export function firstCallBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  if (budget === undefined || context.settings.resume !== undefined) return undefined;
  const started = evolve(context.envelope, runStartedFact(context));
  return budgetStop(budget, started, nextRequestTokens(context, started));
}

/**
 * Why the answer just received may not be acted on: the budget is spent and it is not a valid
 * final answer (the call is paid for: a final answer still ends the run `done`).
 */
export function answerBudgetStop(context: ReactContext): string | undefined {
  const { budget } = context.settings;
  const { validation } = context;
  if (budget === undefined || (validation?.ok === true && validation.answer.action === 'final')) return undefined;
  return budgetStop(budget, context.envelope);
}
