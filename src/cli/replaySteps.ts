import type { LogProblem } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { formatSteps } from './formatSteps.js';
import { line, styles, type Output } from './output.js';
import { runDetails } from '../machines/stepDetails.js';

/**
 * Prints a run's steps in detail (`redflow replay --steps`): as text, or with `json` as
 * `{ events, problems, outcome, ...RunDetails }`, long texts whole. Damaged records are reported
 * as `replay` reports them.
 */
export function printSteps(
  events: readonly AgentEvent[],
  problems: readonly LogProblem[],
  options: { readonly json: boolean; readonly full: boolean },
  output: Output,
): void {
  const details = runDetails(events);
  if (options.json) {
    line(output.out, JSON.stringify({ events: events.length, problems, outcome: details.ending?.outcome ?? null, ...details }, null, 2));
    return;
  }
  const s = styles(output.color);
  line(output.out, s.bold(`run ${details.traceId || '(empty log)'}  started ${details.startedAt || '-'}  ${events.length} events`));
  for (const text of formatSteps(details, { color: output.color, full: options.full })) line(output.out, text);
  for (const problem of problems) line(output.err, s.red(`line ${problem.position}: ${problem.code} ${problem.message}`));
}
