import type { Telemetry } from './telemetry.js';

/**
 * The process's telemetry, as OpenTelemetry's own providers are process-wide: set by
 * `enableTelemetry`, read by every run and every actor this process serves. Unset, each of them
 * makes one check and nothing else.
 */
let active: Telemetry | undefined;

/** The telemetry runs and actors report to, or `undefined` when it is off. */
export function activeTelemetry(): Telemetry | undefined {
  return active;
}

/** Turns telemetry on with `telemetry`, or off with `undefined`. */
export function setActiveTelemetry(telemetry: Telemetry | undefined): void {
  active = telemetry;
}
