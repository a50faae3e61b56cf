/**
 * The model's answer while it is written: the pieces the run stream sends as `event: chunk`
 * (live only, never logged), joined per model call, and dropped once the log records the whole
 * answer. Pure, so the run view machine keeps it and tests check it without a browser.
 */
import type { RunChunk } from '../../runtime/serveActors.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../../events/eventTypes.js';

/** The answer of one model call as streamed so far. */
export interface LiveAnswer {
  readonly iteration: number;
  /** The call's attempt: a retried call starts again, its earlier pieces void. */
  readonly attempt: number;
  readonly text: string;
}

/** The iteration of the last answer the log holds, 0 when none. */
function lastAnsweredIteration(events: readonly AgentEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (event.type === AgentEventType.ModelAnswered) return event.iteration;
  }
  return 0;
}

/**
 * `live` with `chunk` added. A piece of a later call (the next iteration, or a retry) starts the
 * text again; a piece of an earlier one, or of an answer already logged, is stale and ignored.
 *
 * @example
 * ```ts
 * let live = withChunk(undefined, { traceId, iteration: 1, attempt: 1, text: '{"action":' }, events);
 * live = withChunk(live, { traceId, iteration: 1, attempt: 1, text: '"final"' }, events); // text: '{"action":"final"'
 * ```
 */
export function withChunk(live: LiveAnswer | undefined, chunk: RunChunk, events: readonly AgentEvent[]): LiveAnswer | undefined {
  if (chunk.iteration <= lastAnsweredIteration(events)) return live;
  if (live === undefined || chunk.iteration > live.iteration || (chunk.iteration === live.iteration && chunk.attempt > live.attempt)) {
    return { iteration: chunk.iteration, attempt: chunk.attempt, text: chunk.text };
  }
  if (chunk.iteration === live.iteration && chunk.attempt === live.attempt) return { ...live, text: live.text + chunk.text };
  return live;
}

/** `live` after `event`: gone once the log records the answer (`model.answered`) or the run ends. */
export function afterEvent(live: LiveAnswer | undefined, event: AgentEvent): LiveAnswer | undefined {
  if (live === undefined) return undefined;
  if (isTerminal(event)) return undefined;
  if (event.type === AgentEventType.ModelAnswered && event.iteration >= live.iteration) return undefined;
  return live;
}

/** What the editor shows as the model's answer while a run is under way. */
export interface ShownAnswer {
  /** `writing`: the pieces streamed so far; `logged`: the answer as the log records it. */
  readonly state: 'writing' | 'logged';
  readonly iteration: number;
  readonly text: string;
}

/**
 * The answer to show after `events`: the one being written, or else the last logged answer until
 * the model is asked again (then nothing until its first piece comes).
 */
export function shownAnswer(live: LiveAnswer | undefined, events: readonly AgentEvent[]): ShownAnswer | undefined {
  if (live !== undefined) return { state: 'writing', iteration: live.iteration, text: live.text };
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AgentEvent;
    if (event.type === AgentEventType.ModelRequested) return undefined;
    if (event.type === AgentEventType.ModelAnswered) return { state: 'logged', iteration: event.iteration, text: event.data.text };
  }
  return undefined;
}
