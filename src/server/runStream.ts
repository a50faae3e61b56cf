import type { ServerResponse } from 'node:http';
import { ErrorCode, errorInfo } from '../errors.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { ApiError } from './apiErrors.js';
import { StreamEvent, type RunResponse } from './apiTypes.js';
import { openEventStream } from './eventStream.js';
import { activityAsData, createActivityDeriver, type AgentActivityEvent } from '../agents/activity.js';
import type { RunBackend } from './runBackend.js';

/** The longest single wait for a live terminal event to show in the log (the waits double from 10 ms: about 5 s in all). */
const STORE_LAG_MAX_WAIT_MS = 2560;

/**
 * Answers `GET /api/runs/:traceId/stream`: every event of the run after `afterSeq`, live, then
 * `event: end` with the run and the end of the answer.
 *
 * No event is sent twice (a seq at or below the last one sent is dropped, whatever the backend
 * does) and the stream ends only once the client has the run's last event: after the terminal
 * event, or, for a run that will not go on (interrupted, or already finished before `afterSeq`),
 * once every stored event has been sent. A cursor at or past the end of a run under way (a stale
 * or made-up `Last-Event-ID`) gets no event, and the end once the run is over.
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
  // Asked first, so an unknown run is a plain 404 rather than an empty stream.
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
  if (activity !== undefined && afterSeq > 0) for (const event of (await backend.events(traceId, 0)) ?? []) if (event.seq <= afterSeq) derive(event);
  const stream = openEventStream(res, options);
  const sendActivity = (derived: readonly AgentActivityEvent[]) => {
    for (const each of derived) stream.send(StreamEvent.Activity, activityAsData(each));
  };
  let lastSent = afterSeq;
  let ended = false;
  /** Once the terminal event is sent (or seen at or below the cursor), only concludeWhenStored ends the stream. */
  let terminalSeen = false;
  // Set once follow() answers; the callbacks below may run before that.
  const following: { stop?: () => void } = {};
  let stopChunks = (): void => undefined;

  const finish = (run: RunResponse) => {
    if (ended) return;
    ended = true;
    following.stop?.();
    stopChunks();
    stream.end(StreamEvent.End, run);
  };
  /**
   * Ends the stream with the run as stored once its log holds `terminalSeq`. A backend may deliver
   * an event live a moment before its log has it (NATS: the live message and the stream's copy
   * travel apart), and the end must not describe the run without its last event.
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
  const onEvent = (event: AgentEvent) => {
    if (ended || stream.closed) return;
    const derived = derive(event);
    if (event.seq > lastSent) {
      lastSent = event.seq;
      stream.send(StreamEvent.AgentEvent, event, event.seq);
      sendActivity(derived);
    }
    // A terminal event at or below a cursor past the log's end is not sent, but still ends the stream.
    if (isTerminal(event) && !terminalSeen) {
      terminalSeen = true;
      void concludeWhenStored(event.seq).catch(() => stream.close());
    }
  };
  stream.onClose(() => {
    ended = true;
    following.stop?.();
    stopChunks();
  });
  // The answers' pieces as the model writes them: live only, without an id (they are not in the log).
  stopChunks =
    backend.followChunks?.(traceId, (chunk) => {
      if (ended || stream.closed || terminalSeen) return;
      stream.send(StreamEvent.Chunk, chunk);
      if (activity !== undefined) sendActivity(activity.chunk(chunk));
    }) ?? stopChunks;

  // Followed from no later than the log's end: a cursor past it would filter out the terminal
  // event too, and the stream would never learn that the run is over. The events in between are
  // dropped by onEvent.
  const stop = await backend.follow(traceId, Math.min(afterSeq, known.lastSeq), onEvent);
  if (stop === undefined) {
    // Gone between the two questions (its log deleted): nothing more will come.
    if (!ended) stream.close();
    return;
  }
  following.stop = stop;
  if (stream.closed) stop();
  if (ended || stream.closed || terminalSeen) return;
  // Nothing says the run is over yet: it may be under way (its events will come), or it may
  // never go on (interrupted), or the client may already have its last event.
  const run = await backend.get(traceId);
  // A run under way, or parked until its wait is answered, has more to come.
  if (ended || stream.closed || run === undefined || run.status === 'running' || run.status === 'waiting') return;
  if (run.lastSeq > lastSent) {
    // A backend whose follow had not delivered everything stored yet: send the rest from the log.
    for (const event of (await backend.events(traceId, lastSent)) ?? []) onEvent(event);
  }
  if (terminalSeen) return;
  if (run.status === 'interrupted' || lastSent >= run.lastSeq) finish(run);
}

/** The 404 of a trace id that names no run. */
export function runNotFound(traceId: string): ApiError {
  return new ApiError(
    errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${JSON.stringify(traceId.slice(0, 130))}`, { hint: 'GET /api/runs lists the runs' }),
  );
}
