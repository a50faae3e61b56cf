import type { ServerResponse } from 'node:http';
import { ErrorCode } from '../errors.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { pendingWait } from '../events/pendingWait.js';
import { redactSecrets } from '../secrets/secrets.js';
import { createAguiMapper, type AguiEvent } from './aguiEventMap.js';
import { DEFAULT_KEEPALIVE_MS, startEventStream } from './eventStream.js';
import type { RunBackend } from './runBackend.js';
import { runNotFound } from './runStream.js';
import { isToolUpdate } from '../runtime/serveActors.js';

/** Options of {@link streamAgui}. */
export interface AguiStreamOptions {
  readonly traceId: string;
  readonly threadId: string;
  readonly runId: string;
  /** The events up to this seq are the client's already (a reconnect's `Last-Event-ID`, or where an answer resumed the run). */
  readonly afterSeq: number;
  /** Aborts the run when the client leaves before the AG-UI run ends (a `POST`'s run: AG-UI's HttpAgent aborts by closing). */
  readonly abortOnDisconnect: boolean;
  readonly keepAliveMs?: number;
}

/** What encodes an AG-UI event as one SSE frame (`@ag-ui/encoder`'s `EventEncoder.encodeSSE`). */
export type EncodeSse = (event: AguiEvent) => string;

/**
 * Streams a run as AG-UI events (see aguiEventMap.ts), encoded as SSE, until the AG-UI run ends:
 * the run's ending, or the wait it parks in (an interrupt, a frontend tool call). Its events come
 * from the backend's follow (the log, then live) and the pieces of its answers as they stream. The
 * frame of the last AG-UI event of each logged event has the event's seq as its SSE `id`, so an
 * EventSource reconnects after it.
 *
 * @example
 * ```ts
 * await streamAgui(res, backend, new EventEncoder().encodeSSE, { traceId, threadId, runId, afterSeq: 0, abortOnDisconnect: true });
 * ```
 */
export async function streamAgui(res: ServerResponse, backend: RunBackend, encode: EncodeSse, options: AguiStreamOptions): Promise<void> {
  const { traceId } = options;
  const known = await backend.get(traceId);
  if (known === undefined) throw runNotFound(traceId);
  startEventStream(res);
  const mapper = createAguiMapper(options);
  const following = new AbortController();
  let over = false;
  const write = (text: string) => {
    if (!res.writableEnded && !res.destroyed) res.write(text);
  };
  const send = (events: readonly AguiEvent[], seq?: number) => {
    events.forEach((event, i) => write(`${seq !== undefined && i === events.length - 1 ? `id: ${seq}\n` : ''}${redactSecrets(encode(event))}`));
  };
  const keepAlive = setInterval(() => write(': keepalive\n\n'), options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS);
  let stopChunks: () => void = () => undefined;
  const finish = () => {
    over = true;
    following.abort();
    stopChunks();
    clearInterval(keepAlive);
    if (!res.writableEnded) res.end();
  };
  res.once('close', () => {
    clearInterval(keepAlive);
    following.abort();
    stopChunks();
    // The client left before its AG-UI run ended: AG-UI's way of aborting a run.
    if (!over && options.abortOnDisconnect) void backend.abort(traceId, 'the AG-UI client closed its stream').catch(() => undefined);
  });

  /** A run whose log stops early and that nothing runs: its AG-UI run ends once the client has every event its log holds. */
  const endIfInterrupted = async (lastSeen: number): Promise<boolean> => {
    if (known.status !== 'interrupted' || lastSeen < known.lastSeq || ((await backend.events(traceId, lastSeen)) ?? []).length > 0) return false;
    send([{ type: 'RUN_ERROR', code: ErrorCode.RUN_INTERRUPTED, message: `run ${traceId} is not under way: its log stops early, and \`redflow resume\` continues it` }]);
    finish();
    return true;
  };

  send(mapper.start());
  if (await endIfInterrupted(0)) return;
  stopChunks = backend.followChunks?.(traceId, (chunk) => {
    // A tool's progress has no AG-UI event of its own here: the answers' text does.
    if (!over && !isToolUpdate(chunk)) send(mapper.chunk(chunk));
  }) ?? stopChunks;
  // The log as this stream has followed it, from its start: what a wait is judged against. Not the
  // backend's copy, which a live run fills only after its log has the event (a follower can be first).
  const seen: AgentEvent[] = [];
  try {
    for await (const event of backend.follow(traceId, 0, { signal: following.signal })) {
      if (over || res.destroyed) return;
      seen.push(event);
      send(mapper.event(event), event.seq > options.afterSeq ? event.seq : undefined);
      if (isTerminal(event)) return finish();
      if (await endIfInterrupted(event.seq)) return;
      // A wait at or before the cursor is the one the client answered (its answer may not be in the log yet).
      if (event.seq > options.afterSeq && beginsWait(event)) {
        // Still waiting (not answered since)? Then the AG-UI run ends here, with what it waits for.
        const wait = pendingWait(seen);
        const answeredSince = ((await backend.events(traceId, event.seq)) ?? []).length > 0;
        if (wait !== undefined && wait.seq === event.seq && !answeredSince) {
          send(mapper.waiting(wait));
          return finish();
        }
      }
    }
  } catch {
    // The log could not be followed: the client sees the stream end without RUN_FINISHED, and can ask again.
  }
  finish();
}

function beginsWait(event: AgentEvent): boolean {
  return (event.type === 'tool.requested' || event.type === 'tool.approved' || event.type === 'human.requested') && event.data.wait !== undefined;
}
