/**
 * Follows a run's event stream (Server-Sent Events, `ApiRoute.runStream`) as the run view
 * machine's `followRun` actor: each `agent-event` becomes `EVENT`, each `chunk` (a piece of the
 * answer being written) `CHUNK`, the final `end` becomes `END`.
 * The browser reconnects by itself after a network error and resumes after `Last-Event-ID`, so
 * only a stream that closes for good is reported as failed.
 */
import { fromCallback, type EventObject } from 'xstate';
import type { RunChunk } from '../../runtime/serveActors.js';
import type { AgentEvent } from '../../events/eventTypes.js';
import { StreamEvent, type RunResponse } from '../../server/apiTypes.js';
import type { FollowInput, RunViewEvent } from './runViewMachine.js';

/** The `followRun` actor for streams at `urlOf(traceId)`. */
export function followRunStream(urlOf: (traceId: string) => string) {
  return fromCallback<EventObject, FollowInput>(({ input, sendBack }) => {
    const send = (event: RunViewEvent) => sendBack(event);
    const source = new EventSource(urlOf(input.traceId));
    let ended = false;
    source.addEventListener(StreamEvent.AgentEvent, (message) => {
      send({ type: 'EVENT', event: JSON.parse((message as MessageEvent<string>).data) as AgentEvent });
    });
    source.addEventListener(StreamEvent.Chunk, (message) => {
      send({ type: 'CHUNK', chunk: JSON.parse((message as MessageEvent<string>).data) as RunChunk });
    });
    source.addEventListener(StreamEvent.End, (message) => {
      ended = true;
      source.close();
      const data = (message as MessageEvent<string>).data;
      send({ type: 'END', run: data ? (JSON.parse(data) as RunResponse) : undefined });
    });
    source.onerror = () => {
      if (!ended && source.readyState === EventSource.CLOSED) {
        send({ type: 'STREAM_FAILED', message: 'the run’s event stream closed (is the server still up, and the token right?)' });
      }
    };
    return () => source.close();
  });
}
