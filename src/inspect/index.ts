/**
 * The Stately inspector: live runs and replayed logs of the REACT statechart, sent over a
 * WebSocket to the relay (or any receiver speaking @statelyai/inspect's protocol).
 */
export { openInspectSession, type InspectSession, type InspectSessionOptions, type ReplaySummary } from './inspectSession.js';
export { startInspectorRelay, DEFAULT_RELAY_PORT, STATELY_INSPECTOR_URL, type InspectorRelay, type InspectorRelayOptions, type InspectorPageState } from './inspectorRelay.js';
export { connectInspectorSocket, type InspectorSocket, type InspectorSocketOptions } from './inspectorSocket.js';
export { replayMessages, createReplayCursor, reactMachineDefinition, inspectorProtocolVersion } from './replayMessages.js';
export { toJsonSafe } from './jsonSafe.js';
export type { InspectorMessage, InspectorActorMessage, InspectorEventMessage, InspectorSnapshotMessage } from './inspectorMessage.js';
