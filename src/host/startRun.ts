import { startRun as startAdmittedRun, type StartRunOptions } from '../runtime/runAgent.js';
import type { RunHandle } from '../runtime/runSession.js';
import { admitRun } from './admission.js';

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
