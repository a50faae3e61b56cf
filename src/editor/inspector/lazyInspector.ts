/**
 * The Stately inspector's code (@statelyai/inspect, superjson, the replay) is a chunk of its own,
 * loaded when first wanted rather than with the editor: most sessions never open it.
 *
 * The inspector opens in a popup, which the browser allows only soon after the click; so the chunk
 * is fetched as soon as a run is shown ({@link preloadInspector}), and the click finds it loaded.
 */
import type { AgentEvent } from '../../events/eventTypes.js';
import type * as Inspector from './openInInspector.js';

let loading: Promise<typeof Inspector> | undefined;

/** Starts loading the inspector's chunk (once); resolves with its module. */
export function preloadInspector(): Promise<typeof Inspector> {
  loading ??= import('./openInInspector.js');
  return loading;
}

/** {@link openRunInInspector} of `./openInInspector.js`, once its chunk is loaded. */
export async function openRunInInspectorLazily(events: readonly AgentEvent[]): Promise<void> {
  const { openRunInInspector } = await preloadInspector();
  openRunInInspector(events);
}
