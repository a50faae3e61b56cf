import type { RunForkedData, RunStartedData } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { AgentEventType, isTerminal, type AgentEvent } from './eventTypes.js';
import { createRunPathCheck } from './runPath.js';

// The pure part of forking a run: where the fork point is in the parent's log, and the fork's
// log up to it. I/O (reading the parent, writing the fork, running it on) is `forkRun`'s
// (src/host/forkRun.ts).

/** Where a fork at an iteration takes its parent's log up to. */
export interface ForkPoint {
  /** The parent's events before the iteration starts (its own `run.forked`, if any, left out). */
  readonly prefix: readonly AgentEvent[];
  /** The parent's seq of the prefix's last event. */
  readonly atSeq: number;
}

/** The iterations a log started (asked the model for), in order. */
export function startedIterations(events: readonly AgentEvent[]): number[] {
  const iterations = new Set<number>();
  for (const event of events) if (event.type === AgentEventType.ModelRequested) iterations.add(event.iteration);
  return [...iterations];
}

/**
 * The parent's log up to the start of iteration `at`: every event before its first
 * `model.requested` of that iteration.
 *
 * @throws RedflowError `FORK_POINT_OUT_OF_RANGE` when `at` is not a whole number from 1, or the log
 *   never started that iteration.
 *
 * @example
 * ```ts
 * const { prefix, atSeq } = forkPoint(events, 2); // run.started … the tool.completed of iteration 1
 * ```
 */
export function forkPoint(events: readonly AgentEvent[], at: number): ForkPoint {
  const index = Number.isInteger(at) && at >= 1 ? events.findIndex((event) => event.type === AgentEventType.ModelRequested && event.iteration === at) : -1;
  if (index < 1) {
    const started = startedIterations(events);
    const range = started.length === 0 ? 'it started no iteration' : `it started iterations 1 to ${started[started.length - 1]}`;
    throw new RedflowError(
      errorInfo(ErrorCode.FORK_POINT_OUT_OF_RANGE, `the run ${events[0]?.traceId ?? ''} cannot be forked at iteration ${String(at)}: ${range}`, {
        hint: 'give --at an iteration the run started (`redflow replay <log>` lists them); a fork runs that iteration live',
      }),
    );
  }
  const prefix = events.slice(0, index).filter((event) => event.type !== AgentEventType.RunForked);
  return { prefix, atSeq: (events[index - 1] as AgentEvent).seq };
}

/** What a fork's log is made of. */
export interface ForkLogParts {
  readonly traceId: string;
  /** The fork's own start: the parent's input, the current flow's agent and tools. */
  readonly started: RunStartedData;
  readonly forked: RunForkedData;
  /** ISO time of the `run.forked` event (the prefix keeps its parent's times). */
  readonly time: string;
  /** The tools the current flow has (allowed or not), to name what a prefix's call lacks. */
  readonly toolNames: ReadonlySet<string>;
}

/**
 * The fork's log: its `run.started`, `run.forked`, then the parent's prefix re-stamped with the
 * fork's trace id, ids and seqs, checked to be a path the fork's flow can take.
 *
 * @throws RedflowError `FORK_PREFIX_INCOMPATIBLE`, naming the parent's seq and what disagrees.
 *
 * @example
 * ```ts
 * const events = forkLog(forkPoint(parent, 2), { traceId: 'fork-1', started, forked, time, toolNames });
 * ```
 */
export function forkLog(point: ForkPoint, parts: ForkLogParts): AgentEvent[] {
  const { traceId } = parts;
  const [first, ...rest] = point.prefix as [AgentEvent, ...AgentEvent[]];
  const events: AgentEvent[] = [
    { ...first, id: `${traceId}:1`, traceId, seq: 1, data: parts.started } as AgentEvent,
    { id: `${traceId}:2`, traceId, seq: 2, type: AgentEventType.RunForked, time: parts.time, iteration: 0, data: parts.forked } as AgentEvent,
  ];
  const check = createRunPathCheck();
  check.next(events[0] as AgentEvent);
  check.next(events[1] as AgentEvent);
  for (const event of rest) {
    const seq = events.length + 1;
    const copy = { ...event, id: `${traceId}:${seq}`, traceId, seq } as AgentEvent;
    if (copy.type === AgentEventType.RunResumed) (copy as { data: unknown }).data = { afterSeq: seq - 1 };
    if (event.type === AgentEventType.ToolRequested && !parts.toolNames.has(event.data.tool)) {
      throw incompatible(event.seq, `it calls the tool "${event.data.tool}", which the flow no longer has`);
    }
    const why = isTerminal(copy) ? 'the prefix holds the run\'s ending' : check.next(copy);
    if (why !== undefined) throw incompatible(event.seq, why);
    events.push(copy);
  }
  return events;
}

function incompatible(seq: number, why: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.FORK_PREFIX_INCOMPATIBLE, `the parent's event ${seq} does not fit the fork's flow: ${why}`, {
      hint: 'fork at an iteration before that event, or fork with a flow that still has what the run used there (its tools, their approvals, its trigger\'s input)',
    }),
  );
}
