import type { AgentEnvelope, TokenUsage } from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { runDetails } from '../machines/stepDetails.js';
import { stepInProgress } from '../machines/stepInProgress.js';
import { styles } from './output.js';
import { formatStep, formatTokenTotal, sumTokens } from './timeline.js';

/**
 * The timeline `redflow replay` prints for a log, as `redflow run` printed it live: one line per
 * iteration with its model calls' tokens (when the model reported them), then, for a log that
 * stops in the middle of a step (a run under way, or interrupted), that step marked as under way
 * (`… #2  running lookup_order (under way where the log stops)`), and the tokens of all model calls.
 *
 * @example
 * ```ts
 * formatReplayTimeline(events, fold(events), false) // ['  #1  tool   lookup_order  conf 0.80  12 ms  tokens 120 in / 18 out', …]
 * ```
 */
export function formatReplayTimeline(events: readonly AgentEvent[], envelope: AgentEnvelope, color: boolean): string[] {
  const s = styles(color);
  // Tokens per iteration: a retried or rejected answer adds to its iteration's, as in `run`.
  const usageByIteration = new Map<number, TokenUsage>();
  let calls = 0;
  for (const event of events) {
    if (event.type !== AgentEventType.ModelAnswered || event.data.usage === undefined) continue;
    const before = usageByIteration.get(event.iteration);
    usageByIteration.set(event.iteration, before === undefined ? event.data.usage : sumTokens([before, event.data.usage]));
    calls += 1;
  }
  const details = runDetails(events);
  // A fallback that answered is said under its iteration's line, once.
  const switched = new Map(details.iterations.flatMap((it) => (it.model?.switchedModel ? [[it.iteration, it.model.switchedModel] as const] : [])));
  const lines = envelope.observability.events.flatMap((step) => {
    const line = formatStep(step, color, usageByIteration.get(step.iteration));
    const note = switched.get(step.iteration);
    switched.delete(step.iteration);
    return note === undefined ? [line] : [line, s.yellow(`      ${note}`)];
  });
  const underWay = stepInProgress(details);
  if (underWay !== undefined) {
    const it = details.iterations.at(-1);
    const tool = it?.tool?.tool ?? '';
    const what =
      underWay.activity === 'model'
        ? 'waiting for the model'
        : underWay.activity === 'tool'
          ? `running ${tool}`
          : it?.tool?.waiting === 'approval'
            ? `waiting for an approval of ${tool}`
            : it?.tool?.waiting === 'client'
              ? `waiting for the result of ${tool}, which the client runs`
              : 'waiting for a person’s answer';
    lines.push(s.yellow(`  … #${underWay.iteration}  ${what} (under way where the log stops)`));
  }
  if (calls > 0) lines.push(s.dim(formatTokenTotal(sumTokens(usageByIteration.values()), calls)));
  return lines;
}
