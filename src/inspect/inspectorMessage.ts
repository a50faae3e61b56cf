import type { AnyEventObject, Snapshot } from 'xstate';

// The Stately inspector's messages, as @statelyai/inspect types them (StatelyInspectionEvent and
// its three members), declared here so that Redflow's published types do not import that
// package's: its declarations need the DOM library (Window, HTMLIFrameElement), which a Node
// project compiled with skipLibCheck off does not have. The shapes are the same, field for field,
// so values pass between the two without casts (src/inspect's own code does both).

/** What every inspector message carries. */
interface InspectorMessageBase {
  /** The session: for Redflow, the run's trace id. */
  sessionId: string;
  rootId: string | undefined;
  /** Epoch milliseconds, as text. */
  createdAt: string;
  id: string;
  /** @statelyai/inspect's protocol version. */
  _version: string;
}

/** An actor registered: its machine's definition (JSON) and first snapshot. */
export interface InspectorActorMessage extends InspectorMessageBase {
  type: '@xstate.actor';
  name: string;
  snapshot: { status?: Snapshot<unknown>['status']; context?: unknown; value?: unknown; output?: unknown };
  definition: string | undefined;
  parentId: string | undefined;
}

/** An event sent to the actor. */
export interface InspectorEventMessage extends InspectorMessageBase {
  type: '@xstate.event';
  rootId: string;
  event: AnyEventObject;
  sourceId: string | undefined;
}

/** The actor's snapshot after an event. */
export interface InspectorSnapshotMessage extends InspectorMessageBase {
  type: '@xstate.snapshot';
  rootId: string;
  event: AnyEventObject;
  snapshot: Snapshot<unknown>;
}

/** One message of the Stately inspector's protocol (one JSON text message on its WebSocket). */
export type InspectorMessage = InspectorActorMessage | InspectorEventMessage | InspectorSnapshotMessage;
