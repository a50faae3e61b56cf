import type { ServerResponse } from 'node:http';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { StreamEvent, type RunResponse } from './apiTypes.js';
import { openEventStream } from './eventStream.js';
import { activityAsData, createActivityDeriver, type AgentActivityEvent } from '../agents/activity.js';
import type { RunBackend } from './runBackend.js';
import { isToolUpdate, type RunChunk } from '../runtime/serveActors.js';

/** The longest single wait for a live terminal event to show in the log (the waits double from 10 ms: about 5 s in all). */
const STORE_LAG_MAX_WAIT_MS = 2560;

/**
 * Answers `GET /api/runs/:traceId/stream`: every event of the run after `afterSeq`, live, then
 * `event: end` with the run and the end of the answer.
 *
 * The events are the backend's `follow` (its event store's: each once, in order, stored before
 * they are sent), and no event is sent twice (a seq at or below the last one sent is dropped,
 * whatever the backend does). The stream ends only once the client has the run's last event:
 * after the terminal event, or, for a run that will not go on (interrupted, or already finished
 * before `afterSeq`), once every stored event has been sent. A cursor at or past the end of a run
 * under way (a stale or made-up `Last-Event-ID`) gets no event, and the end once the run is over.
 *
 * @throws ApiError RUN_NOT_FOUND (before anything is sent) for an unknown trace id.
 */
export async function streamRun(
  res: ServerResponse,
  backend: RunBackend,
  traceId: string,
  afterSeq: number,
  options: { readonly keepAliveMs?: number; readonly activity?: boolean } = {},
): Promise<void> {
  // Asked first, so an unknown run is a plain 404 rather than an empty stream (a follow waits for it).
  const known = await backend.get(traceId);
  if (known === undefined) throw runNotFound(traceId);
  // The activity goes on from where the client is: its deriver learns every event, and the
  // activity of those up to the cursor (the client's already) is not sent again.
  const activity = options.activity === true ? createActivityDeriver() : undefined;
  let derivedUpTo = 0;
  const derive = (event: AgentEvent): AgentActivityEvent[] => {
    if (activity === undefined || event.seq <= derivedUpTo) return [];
    derivedUpTo = event.seq;
    const derived = activity.event(event);
    return event.seq > afterSeq ? derived : [];
  };
  const stream = openEventStream(res, options);
  const sendActivity = (derived: readonly AgentActivityEvent[]) => {
    for (const each of derived) stream.send(StreamEvent.Activity, activityAsData(each));
  };
  let lastSent = afterSeq;
  let ended = false;
  const following = new AbortController();
  let stopChunks = (): void => undefined;

  const finish = (run: RunResponse) => {
    if (ended) return;
    ended = true;
    following.abort();
    stopChunks();
    stream.end(StreamEvent.End, run);
  };
  /**
   * Ends the stream with the run as the backend describes it once that holds `terminalSeq`. The
   * log has the event before it is followed, but a backend's `get` may answer from elsewhere a
   * moment behind it (an embedded run's own list, filled after the append), and the end must not
   * describe the run without its last event.
   */
  const concludeWhenStored = async (terminalSeq: number) => {
    for (let waitMs = 10; ; waitMs *= 2) {
      const run = await backend.get(traceId);
      if (!run) return stream.close();
      // Past a few seconds the log is what it is: end with it.
      if (run.lastSeq >= terminalSeq || waitMs > STORE_LAG_MAX_WAIT_MS || ended || stream.closed) return finish(run);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  };
  stream.onClose(() => {
    ended = true;
    following.abort();
    stopChunks();
  });
  // The answers' pieces as the model writes them: live only, without an id (they are not in the log).
  let terminalSeen = false;
  // The activity of a piece waits until the follow has read its model call's request: the follow
  // reads the log from its start and is behind the live pieces at first, and a piece taken before
  // the turns ahead of it would open its turn early and make their ends look late.
  let requestedIteration = 0;
  let heldChunks: RunChunk[] = [];
  const chunkActivity = (chunk: RunChunk) => {
    if (activity === undefined) return;
    if (chunk.iteration > requestedIteration) heldChunks.push(chunk);
    else sendActivity(activity.chunk(chunk));
  };
  const modelRequested = (iteration: number) => {
    requestedIteration = Math.max(requestedIteration, iteration);
    const due = heldChunks.filter((chunk) => chunk.iteration <= requestedIteration);
    heldChunks = heldChunks.filter((chunk) => chunk.iteration > requestedIteration);
    for (const chunk of due) chunkActivity(chunk);
  };
  stopChunks =
    backend.followChunks?.(traceId, (chunk) => {
      if (ended || stream.closed || terminalSeen) return;
      // A tool's progress is activity only: the chunk events are the answers' text.
      if (isToolUpdate(chunk)) return sendActivity(activity?.chunk(chunk) ?? []);
      stream.send(StreamEvent.Chunk, chunk);
      chunkActivity(chunk);
    }) ?? stopChunks;

  // A run that is interrupted does not go on: its stream ends once the client has every event its
  // log holds (asked of the log itself: `get` may lag it).
  let lastOfInterrupted = known.status === 'interrupted' ? known.lastSeq : undefined;
  /** For an interrupted run, once the client has its last known event: the end, or what the log holds past it. */
  const restOfInterrupted = async (): Promise<'ended' | 'more'> => {
    const rest = (await backend.events(traceId, lastSent)) ?? [];
    const last = rest.at(-1);
    if (last === undefined) {
      finish((await backend.get(traceId)) ?? known);
      return 'ended';
    }
    lastOfInterrupted = last.seq;
    return 'more';
  };
  if (lastOfInterrupted !== undefined && afterSeq >= lastOfInterrupted && (await restOfInterrupted()) === 'ended') return;
  // Followed from no later than the log's end: a cursor past it would pass over the terminal event
  // too, and the stream would never learn that the run is over. With the activity, from the start:
  // the deriver learns the events the client has. The events in between are dropped below.
  const from = activity !== undefined ? 0 : Math.min(afterSeq, known.lastSeq);
  let terminalSeq: number | undefined;
  try {
    for await (const event of backend.follow(traceId, from, { signal: following.signal })) {
      if (ended || stream.closed) return;
      const derived = derive(event);
      if (event.seq > lastSent) {
        lastSent = event.seq;
        stream.send(StreamEvent.AgentEvent, event, event.seq);
        sendActivity(derived);
      }
      if (event.type === AgentEventType.ModelRequested) modelRequested(event.iteration);
      // A terminal event at or below a cursor past the log's end is not sent, but still ends the stream.
      if (isTerminal(event)) {
        terminalSeen = true;
        terminalSeq = event.seq;
        break;
      }
      if (lastOfInterrupted !== undefined && lastSent >= lastOfInterrupted && (await restOfInterrupted()) === 'ended') return;
    }
  } catch {
    // The log could not be followed (its store out of reach, a damaged record): the client
    // reconnects with its Last-Event-ID and learns then what happened.
    if (!ended) stream.close();
    return;
  }
  if (ended || stream.closed) return;
  if (terminalSeq !== undefined) return concludeWhenStored(terminalSeq).catch(() => stream.close());
  // The follow ended without an ending after the cursor: the run had ended at or before it.
  const run = await backend.get(traceId);
  if (run === undefined) return stream.close();
  finish(run);
}

/** The 404 of a trace id that names no run. */
export function runNotFound(traceId: string): ApiError {
  return new ApiError(
    errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${JSON.stringify(traceId.slice(0, 130))}`, { hint: 'GET /api/runs lists the runs' }),
  );
}
