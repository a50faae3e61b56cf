/**
 * "Open in Stately inspector": replays a run's log into the Stately inspector, in a popup opened
 * by `createBrowserInspector`. The messages — the actor with the REACT machine's definition, then
 * the event and the snapshot after it for each step — come from src/inspect/replayMessages.ts,
 * the same replay `redflow serve --inspect` uses, so a run looks the same from either side.
 */
import { createBrowserInspector } from '@statelyai/inspect';
import type { AgentEvent } from '../../events/eventTypes.js';
import { replayMessages } from '../../inspect/replayMessages.js';

/** Opens the inspector (a popup: call it from a click) and sends it the run; returns the inspector. */
export function openRunInInspector(events: readonly AgentEvent[], create: typeof createBrowserInspector = createBrowserInspector) {
  const inspector = create({ autoStart: true });
  // The adapter holds the messages until the inspector window says it is connected, then sends them.
  for (const message of replayMessages(events)) inspector.adapter.send(message);
  return inspector;
}
