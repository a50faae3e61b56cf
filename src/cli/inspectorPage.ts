import type { InspectorPageState } from '../inspect/inspectorRelay.js';
import { line, styles, type Output } from './output.js';

/**
 * How long `run --inspect` waits, once the run has ended, for the relay's page to load the hosted
 * inspector: more than the page's own 10 s verdict on it, with time for a browser to open.
 */
export const RUN_PAGE_WAIT_MS = 15_000;

/** What to use when the hosted inspector cannot load: Redflow's own statechart view. */
const OFFLINE_HINT = "without internet, step through the run's statechart in Redflow's own editor: `redflow serve`, open the run";

/** Says, before anything is sent, that the page needs the internet (stderr: stdout may be JSON). */
export function sayInspectorIsHosted(output: Output): void {
  line(output.err, styles(output.color).dim(`inspector: the Stately inspector is a hosted page (it loads from stately.ai): the browser needs internet access; ${OFFLINE_HINT}`));
}

/** Says what the relay's page made of the hosted inspector; `again` is how to see the run later. */
export function sayWhatThePageShowed(state: InspectorPageState, pageUrl: string, again: string, output: Output): void {
  const s = styles(output.color);
  if (state === 'loaded') {
    line(output.err, s.cyan(`inspector: ${pageUrl} received the run`));
    return;
  }
  if (state === 'unavailable') {
    line(output.err, s.yellow(`inspector: the browser could not load the hosted Stately inspector (stately.ai): check its internet access; ${OFFLINE_HINT}`));
    return;
  }
  const what = state === 'none' ? `no page opened ${pageUrl}` : `the page at ${pageUrl} had not loaded the hosted inspector`;
  line(output.err, s.yellow(`inspector: ${what} within ${RUN_PAGE_WAIT_MS / 1000} s of the run's end; ${again} shows the run again`));
}
