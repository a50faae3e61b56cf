import type { AgentEvent } from '../events/eventTypes.js';
import type { RunStart } from '../machines/reactTypes.js';
import { activeTelemetry } from './activeTelemetry.js';
import type { RunTelemetry } from './telemetry.js';

/**
 * The telemetry of a stretch of run `traceId` that begins now in this process, or `undefined`
 * while telemetry is off (the only cost then). `sessionId` is the run's conversation for
 * telemetry when its log names none (a step-service session).
 */
export function watchRun(traceId: string, run: RunStart, resumed: boolean, sessionId?: string): RunTelemetry | undefined {
  const telemetry = activeTelemetry();
  if (telemetry === undefined) return undefined;
  try {
    const watched = telemetry.startRun({
      traceId,
      resumed,
      startedAt: run.startedAt,
      ...(run.flow?.id !== undefined && { flowId: run.flow.id }),
      ...((run.conversationId ?? sessionId) !== undefined && { conversationId: run.conversationId ?? sessionId }),
      ...(run.parent !== undefined && { parent: run.parent }),
    });
    return {
      onEvent: (event) => watched.onEvent(event),
      carry: (transport) => {
        try {
          return watched.carry(transport);
        } catch {
          return transport;
        }
      },
      end: (error) => {
        try {
          watched.end(error);
        } catch {
          // The span is lost; the run's result is not touched.
        }
      },
    };
  } catch {
    // Telemetry never stops a run: this stretch goes unrecorded.
    return undefined;
  }
}

/** `onEvent`, and the run's telemetry too when it is watched. */
export function alsoTo(watched: RunTelemetry | undefined, onEvent: ((event: AgentEvent) => void) | undefined): ((event: AgentEvent) => void) | undefined {
  if (watched === undefined) return onEvent;
  const observe = (event: AgentEvent) => {
    try {
      watched.onEvent(event);
    } catch {
      // Telemetry never fails a run: a span lost is all a bug here may cost.
    }
  };
  if (onEvent === undefined) return observe;
  return (event) => {
    observe(event);
    onEvent(event);
  };
}
