import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import { systemPromptFor } from '../machines/prompt.js';
import { checkFitsBudget } from '../runtime/contextBudgetFor.js';
import { checkRunInput } from '../runtime/dataLimits.js';
import { startRun as startAdmittedRun, type StartRunOptions } from '../runtime/runAgent.js';
import type { RunHandle } from '../runtime/runSession.js';

/** What {@link admitRun} checks a run's start against. */
export interface AdmissionRequest {
  /** The run's input, as `run.started` will record it. */
  readonly input: unknown;
  /** The agent, for its system prompt (which the context budget must hold with the input). */
  readonly agent: Pick<AgentCoreReactConfig, 'instructions' | 'reasoning' | 'outputSchema'>;
  /** The tools the model is told about. */
  readonly tools: readonly ToolSpec[];
  /** The model's window; without one, the input is not measured against it. */
  readonly contextBudget?: ContextBudget;
  /**
   * The host's own checks of the input (a trigger's `inputSchema`, the flow a request names): run
   * after the limits, so a check never walks an input nested past them, and before the budget.
   */
  readonly checkInput?: (input: unknown) => void;
}

/**
 * Admits a run's start, once, before anything of the run exists (a log, a run record): its input
 * is within the limits a model's answer has (`RUN_INPUT_TOO_DEEP`, `RUN_INPUT_TOO_LARGE`), passes
 * the host's own check, and fits the model's window with the system prompt
 * (`CONTEXT_BUDGET_EXCEEDED`: those two are never left out to fit). Every host calls it once per
 * run start; `startRun` of the runtime checks nothing itself.
 *
 * @throws RedflowError with the first check's code.
 * @example
 * ```ts
 * admitRun({ input: 'Where is A-1001?', agent, tools, contextBudget });
 * const handle = startRun({ ...environment, agent, tools, input: 'Where is A-1001?' });
 * ```
 */
export function admitRun(request: AdmissionRequest): void {
  checkRunInput(request.input);
  request.checkInput?.(request.input);
  if (request.contextBudget === undefined) return;
  const input = typeof request.input === 'string' ? request.input : (JSON.stringify(request.input) ?? 'null');
  checkFitsBudget([systemPromptFor(request.tools, request.agent), input], request.contextBudget);
}

/**
 * Starts a run as a library caller does: admits it ({@link admitRun}: the input's limits and the
 * model's window), then runs the REACT statechart with its actors reached over `transport`,
 * appending every transition to `store`.
 *
 * @throws RedflowError `RUN_INPUT_TOO_DEEP`, `RUN_INPUT_TOO_LARGE`, `CONTEXT_BUDGET_EXCEEDED`
 *   (nothing is recorded).
 * @example
 * ```ts
 * const run = startRun({ agent, tools, transport, subjects, store, input: 'Where is order A-1?' });
 * const { outcome, envelope } = await run.result;
 * ```
 */
export function startRun(options: StartRunOptions): RunHandle {
  admitRun({ input: options.input, agent: options.agent, tools: options.tools, ...(options.contextBudget !== undefined && { contextBudget: options.contextBudget }) });
  return startAdmittedRun(options);
}
