import type { RunDetails } from './stepDetails.js';

/**
 * What the step under way is doing: `model` (the model was asked and has not answered), `tool` (a
 * tool call is running), `waiting` (a call waits for an approval or its client, or a question for
 * a person's answer).
 */
export type StepActivity = 'model' | 'tool' | 'waiting';

/** The step under way at a position of a run: its iteration and what it is doing. */
export interface StepInProgress {
  readonly iteration: number;
  readonly activity: StepActivity;
}

/**
 * The step a run is in the middle of, as of the events in `details` (the latest while it streams,
 * the scrubber's position in a replay, where the log stops for an interrupted run); undefined once
 * the run has ended, or between steps. The editor's timeline and `redflow replay` mark it, so a
 * step under way never reads like a finished one (a tool's line looks the same before and after
 * its call) and a model call being waited for is seen at all (the envelope's timeline has no line
 * for it yet).
 *
 * @example
 * ```ts
 * stepInProgress(runDetails(events)) // { iteration: 2, activity: 'model' } while the model thinks
 * ```
 */
export function stepInProgress(details: RunDetails): StepInProgress | undefined {
  if (details.ending !== null) return undefined;
  const last = details.iterations.at(-1);
  // A failed call ended its step: the next one starts with the next model request.
  if (last === undefined || last.failure !== null) return undefined;
  const { iteration } = last;
  if (last.model === null) return { iteration, activity: 'model' };
  if (last.tool !== null && last.tool.result === null) return { iteration, activity: last.tool.waiting === null ? 'tool' : 'waiting' };
  if (last.exchange?.status === 'waiting') return { iteration, activity: 'waiting' };
  return undefined;
}
