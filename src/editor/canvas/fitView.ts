/**
 * How the canvas fits a flow into view, when a flow is opened and with the fit button: a narrow
 * margin, never past 110 %, and never below the zoom at which the nodes' smallest text (14 px)
 * still shows at 12 px on screen. A flow too wide for the window at that zoom is centred and
 * panned, rather than shrunk until its text cannot be read.
 */
import type { FitViewOptions } from '@xyflow/react';

/** The smallest font size of a node card's text, in canvas pixels (styles.css, `.rf-node__*`). */
export const NODE_TEXT_PX = 14;
/** The smallest size node text may show at on screen. */
export const MIN_SCREEN_TEXT_PX = 12;

/** The options of every fit of the flow canvas. */
export const FIT_VIEW_OPTIONS = {
  padding: '12px',
  minZoom: Math.ceil((MIN_SCREEN_TEXT_PX / NODE_TEXT_PX) * 100) / 100,
  maxZoom: 1.1,
} as const satisfies FitViewOptions;
