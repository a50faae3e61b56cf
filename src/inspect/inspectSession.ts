import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import type { InspectionEvent, MachineContext } from 'xstate';
import type { RedflowError } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { ReactContext } from '../machines/reactTypes.js';
import { connectInspectorSocket, type InspectorSocket } from './inspectorSocket.js';
import { startInspectorRelay, type InspectorPageState, type InspectorRelay } from './inspectorRelay.js';
import { JSON_SAFE_MAX_DEPTH } from './jsonSafe.js';
import { createReplayCursor, forkOfRun, replayMessages, type ForkOf } from './replayMessages.js';

/** Options of {@link openInspectSession}. */
export interface InspectSessionOptions {
  /**
   * Send to the inspector WebSocket at this URL (a relay or receiver already running, e.g.
   * `ws://127.0.0.1:8080`) and start no relay.
   */
  readonly url?: string;
  /** Without `url`: the port of the relay to start (default 8080; 0 picks a free one). */
  readonly port?: number;
  /** Without `url`: open the relay's page in the browser (default true). */
  readonly open?: boolean;
  /** Without `url`: how many messages the relay keeps for a page that opens late. */
  readonly relayBufferSize?: number;
  /** How long to wait for the WebSocket to open (default 5 s). */
  readonly connectTimeoutMs?: number;
  /**
   * Told once when the inspector can no longer be reached after the session opened. Runs go on
   * regardless: inspection never fails a run.
   */
  readonly onError?: (error: RedflowError) => void;
}

/** What one replay sent. */
export interface ReplaySummary {
  /** The inspector session id: the run's trace id. */
  readonly traceId: string;
  readonly events: number;
  /** Inspector messages sent: the actor registration, then an event and a snapshot per log event. */
  readonly messages: number;
  /** For a fork: the run it was forked from, and where (its snapshots' context shows it too). */
  readonly forkOf?: ForkOf;
}

/** A connection to the Stately inspector, for live runs and replays. */
export interface InspectSession {
  /** Where messages go. */
  readonly socketUrl: string;
  /** The page showing the inspector, when this session started the relay (else undefined). */
  readonly pageUrl: string | undefined;
  /** Whether this session asked the browser to open {@link pageUrl}. */
  readonly opened: boolean;
  /**
   * The inspection observer for one run's statechart: pass it as `inspect` to `startRun`,
   * `runFlowFile`, … Its actor shows under the session id `traceId` (its transport actor under
   * `<traceId>/transport`); every microstep is sent as a snapshot, so the transient states
   * `validating` and `checkingStop` show as well. Never throws.
   */
  inspectRun(traceId: string): (event: InspectionEvent) => void;
  /** Sends a run's log: the actor with the REACT machine's definition, then each event and the snapshot after it. */
  replay(events: readonly AgentEvent[]): ReplaySummary;
  /** Replays events one at a time as they arrive (a run followed on a cluster). */
  follow(): (event: AgentEvent) => void;
  /** Resolves once everything handed to the session so far has been written to the socket. */
  flush(): Promise<void>;
  /**
   * With the relay this session started: resolves once its page has loaded the hosted inspector
   * (or found it cannot), or after `timeoutMs`, with what the relay knows of its pages then.
   * Without a relay: `none` at once.
   */
  waitForPage(timeoutMs?: number): Promise<InspectorPageState>;
  /** Flushes, closes the socket, and stops the relay this session started. Idempotent. */
  close(): Promise<void>;
}

/**
 * The context the inspector shows for the REACT machine. The machine's own context holds the
 * answer rules (compiled validators in a Map, a Set) and the host's effects (a function), which
 * are not data; the prompt, tool specs and input are in the envelope and the log already.
 */
function inspectedContext(context: MachineContext): MachineContext {
  if (typeof context !== 'object' || context === null || !('envelope' in context) || !('settings' in context)) return context;
  const { envelope, validation, answerLength, settings } = context as unknown as ReactContext;
  if (typeof settings !== 'object' || settings === null) return { envelope };
  return {
    envelope,
    validation,
    answerLength,
    settings: {
      traceId: settings.traceId,
      agent: settings.agent,
      timeoutMs: settings.timeoutMs,
      resume: settings.resume && { at: settings.resume.at, afterSeq: settings.resume.afterSeq },
    },
  };
}

/**
 * Opens an inspector session: starts the relay (unless `url` is given) and connects to it. Rejects
 * with `INSPECT_UNAVAILABLE` when the relay's port is taken or the inspector at `url` cannot be
 * reached, before any run depends on it.
 *
 * @example
 * ```ts
 * const session = await openInspectSession({ url: 'ws://127.0.0.1:8080' });
 * const run = await runFlowFile({ flowPath, input, traceId, inspect: session.inspectRun(traceId) });
 * await run.finished();
 * await session.close(); // everything sent first
 * ```
 */
export async function openInspectSession(options: InspectSessionOptions = {}): Promise<InspectSession> {
  const relay: InspectorRelay | undefined =
    options.url === undefined
      ? await startInspectorRelay({
          ...(options.port !== undefined && { port: options.port }),
          ...(options.open !== undefined && { open: options.open }),
          ...(options.relayBufferSize !== undefined && { bufferSize: options.relayBufferSize }),
        })
      : undefined;
  let socket: InspectorSocket;
  try {
    socket = await connectInspectorSocket(options.url ?? (relay as InspectorRelay).socketUrl, {
      ...(options.connectTimeoutMs !== undefined && { timeoutMs: options.connectTimeoutMs }),
      ...(options.onError !== undefined && { onError: options.onError }),
    });
  } catch (error) {
    await relay?.stop();
    throw error;
  }

  // XState session ids (x:0, x:1, …) are per process; the inspector shows runs by trace id instead.
  const aliases = new Map<string, string>();
  const childrenOf = new Map<string, string[]>();
  const forget = (rootSessionId: string) => {
    for (const child of childrenOf.get(rootSessionId) ?? []) aliases.delete(child);
    aliases.delete(rootSessionId);
    childrenOf.delete(rootSessionId);
  };
  const alias = <T extends string | undefined>(id: T): T => (id === undefined ? id : ((aliases.get(id) ?? id) as T));
  const serialize = (message: StatelyInspectionEvent): StatelyInspectionEvent => {
    // Runs in the inspector's own timer: a throw here would be an uncaught exception, so none may escape.
    try {
      return renamed(message);
    } catch {
      return message;
    }
  };
  const renamed = (message: StatelyInspectionEvent): StatelyInspectionEvent => {
    // The library's own types say rootId is a string, its messages sometimes carry undefined.
    const renamed = { ...message, sessionId: alias(message.sessionId), rootId: alias(message.rootId as string | undefined) } as StatelyInspectionEvent;
    if (renamed.type === '@xstate.actor') renamed.parentId = alias(renamed.parentId);
    if (renamed.type === '@xstate.event') renamed.sourceId = alias(renamed.sourceId);
    return renamed;
  };
  const inspector = createInspector(
    { send: (message: StatelyInspectionEvent) => socket.send(message) },
    { serialize, sanitizeContext: inspectedContext, serializationDepthLimit: JSON_SAFE_MAX_DEPTH },
  );

  let closing: Promise<void> | undefined;
  const flush = async () => {
    // The inspector converts live events in a setTimeout(0) of its own (off the run's path): a
    // timer set now fires after those, so their messages have reached the socket when it does.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await socket.flush();
  };
  const sendAll = (messages: readonly StatelyInspectionEvent[]) => {
    for (const message of messages) socket.send(message);
  };

  return {
    socketUrl: socket.url,
    pageUrl: relay?.pageUrl,
    opened: relay?.opened ?? false,
    inspectRun(traceId) {
      const lastMicrostep = new Map<string, unknown>();
      return (event) => {
        try {
          const sessionId = event.actorRef.sessionId;
          if (event.type === '@xstate.actor') {
            if (event.rootId === sessionId || event.rootId === undefined) {
              aliases.set(sessionId, traceId);
              childrenOf.set(sessionId, []);
            } else {
              const child = `${traceId}/${(event.actorRef as { id?: string }).id ?? sessionId}`;
              aliases.set(sessionId, child);
              childrenOf.get(event.rootId)?.push(sessionId);
            }
          }
          if (event.type === '@xstate.microstep') {
            // Eventless transitions (validating, checkingStop) happen inside one macrostep, whose
            // snapshot shows only where it ended: each microstep becomes a snapshot of its own.
            lastMicrostep.set(sessionId, event.snapshot);
            inspector.inspect.next?.({ type: '@xstate.snapshot', rootId: event.rootId, actorRef: event.actorRef, event: event.event, snapshot: event.snapshot });
            return;
          }
          if (event.type === '@xstate.snapshot' && event.snapshot.status !== 'active' && childrenOf.has(sessionId)) {
            // The root's last snapshot: its actors send nothing more. Forget their names once the
            // inspector has converted what is queued (its timers run first), or a server's map only grows.
            setTimeout(() => forget(sessionId), 0);
          }
          // The macrostep's snapshot is its last microstep's (the same object): already sent.
          if (event.type === '@xstate.snapshot' && lastMicrostep.get(sessionId) === event.snapshot) return;
          inspector.inspect.next?.(event);
        } catch {
          // Inspection is a bystander: nothing it does may reach the run.
        }
      };
    },
    replay(events) {
      const messages = replayMessages(events);
      sendAll(messages);
      const forkOf = forkOfRun(events);
      return { traceId: events[0]?.traceId ?? '', events: events.length, messages: messages.length, ...(forkOf !== undefined && { forkOf }) };
    },
    follow() {
      const cursor = createReplayCursor();
      return (event) => {
        try {
          sendAll(cursor.next(event));
        } catch {
          // As for live runs: a bad event must not stop the run being followed.
        }
      };
    },
    flush,
    waitForPage: (timeoutMs) => relay?.waitForPage(timeoutMs) ?? Promise.resolve('none'),
    close() {
      closing ??= (async () => {
        await flush().catch(() => undefined);
        await socket.close();
        await relay?.stop();
      })();
      return closing;
    },
  };
}
