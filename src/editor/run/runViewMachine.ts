/**
 * The run panel's state (used with @xstate/react): idle → starting → streaming → finished | failed,
 * and loading → replay (a finished run opened from its log, stepped through with the scrubber) or
 * loading → streaming (a run opened while still under way, followed live). The effects
 * (start a run, follow its stream, load a log, abort) are actors the app provides with
 * `runViewMachine.provide({ actors })`; the machine only keeps the events and the scrubber.
 */
import { assign, fromCallback, fromPromise, setup, spawnChild, type EventObject } from 'xstate';
import type { AgentEvent } from '../../events/eventTypes.js';
import type { RunResponse } from '../../server/apiTypes.js';
import type { RunChunk } from '../../runtime/serveActors.js';
import { afterEvent, withChunk, type LiveAnswer } from './liveAnswer.js';

/** The states of the run panel. */
export const RunViewState = {
  Idle: 'idle',
  Starting: 'starting',
  Streaming: 'streaming',
  Finished: 'finished',
  Failed: 'failed',
  Loading: 'loading',
  Replay: 'replay',
} as const;

/** One of {@link RunViewState}'s values. */
export type RunViewState = (typeof RunViewState)[keyof typeof RunViewState];

/** What the run panel's machine keeps. */
export interface RunViewContext {
  /** The run shown: once it started, or as soon as it is opened. */
  readonly traceId: string | undefined;
  /** The flow a run was started from here (not set for a run opened from the list). */
  readonly flowId: string | undefined;
  /** The run's events so far, in seq order. */
  readonly events: readonly AgentEvent[];
  /** The scrubber's position (an index in `events`); `undefined` follows the latest event. */
  readonly position: number | undefined;
  /** The run as the API last described it (once it ended, or was opened from the list). */
  readonly run: RunResponse | undefined;
  /** Why the panel failed (the run could not be started, followed or loaded). */
  readonly problem: string | undefined;
  /** The model's answer as it streams (`CHUNK`s), until the log records it. */
  readonly live: LiveAnswer | undefined;
}

/**
 * What the run panel's machine receives: `START`, `OPEN`, `ABORT`, `SCRUB` and `CLOSE` from the UI;
 * `EVENT`, `CHUNK` (a piece of the answer being written), `END` and `STREAM_FAILED` from the
 * `followRun` actor.
 */
export type RunViewEvent =
  | { type: 'START'; flowId: string; input: unknown }
  | { type: 'OPEN'; traceId: string }
  | { type: 'EVENT'; event: AgentEvent }
  | { type: 'CHUNK'; chunk: RunChunk }
  | { type: 'END'; run: RunResponse | undefined }
  | { type: 'STREAM_FAILED'; message: string }
  | { type: 'ABORT' }
  | { type: 'SCRUB'; position: number }
  | { type: 'CLOSE' };

/** The input of the actor that follows a run's stream; it sends back `EVENT`s, then `END` or `STREAM_FAILED`. */
export interface FollowInput {
  readonly traceId: string;
}

function notProvided(name: string): never {
  throw new Error(`runViewMachine: the app must provide the '${name}' actor`);
}

const initialContext: RunViewContext = {
  traceId: undefined,
  flowId: undefined,
  events: [],
  position: undefined,
  run: undefined,
  problem: undefined,
  live: undefined,
};

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Adds an event unless it is already there (a reconnected stream never repeats one, but be safe). */
function withEvent(events: readonly AgentEvent[], event: AgentEvent): readonly AgentEvent[] {
  const last = events[events.length - 1];
  if (last !== undefined && event.seq <= last.seq) return events;
  return [...events, event];
}

/**
 * The run panel's machine. Its actors are stubs that throw: provide them (as `useRunView` does)
 * before running it, so the machine stays testable without a server.
 */
export const runViewMachine = setup({
  types: {
    context: {} as RunViewContext,
    events: {} as RunViewEvent,
  },
  actors: {
    startRun: fromPromise<{ traceId: string }, { flowId: string; input: unknown }>(async () => notProvided('startRun')),
    followRun: fromCallback<EventObject, FollowInput>(() => notProvided('followRun')),
    loadRun: fromPromise<{ events: readonly AgentEvent[]; run: RunResponse | undefined }, { traceId: string }>(async () => notProvided('loadRun')),
    abortRun: fromPromise<void, { traceId: string }>(async () => notProvided('abortRun')),
  },
}).createMachine({
  id: 'runView',
  initial: RunViewState.Idle,
  context: initialContext,
  on: {
    OPEN: { target: `.${RunViewState.Loading}`, actions: assign(({ event }) => ({ ...initialContext, traceId: event.traceId })) },
    CLOSE: { target: `.${RunViewState.Idle}`, actions: assign(() => initialContext) },
  },
  states: {
    [RunViewState.Idle]: {
      on: { START: RunViewState.Starting },
    },
    [RunViewState.Starting]: {
      entry: assign(({ event }) => (event.type === 'START' ? { ...initialContext, flowId: event.flowId } : {})),
      invoke: {
        src: 'startRun',
        input: ({ event }) => (event.type === 'START' ? { flowId: event.flowId, input: event.input } : { flowId: '', input: null }),
        onDone: { target: RunViewState.Streaming, actions: assign({ traceId: ({ event }) => event.output.traceId }) },
        onError: { target: RunViewState.Failed, actions: assign({ problem: ({ event }) => messageOf(event.error) }) },
      },
    },
    [RunViewState.Streaming]: {
      invoke: {
        src: 'followRun',
        input: ({ context }) => ({ traceId: context.traceId ?? '' }),
      },
      on: {
        EVENT: {
          actions: assign({
            events: ({ context, event }) => withEvent(context.events, event.event),
            live: ({ context, event }) => afterEvent(context.live, event.event),
          }),
        },
        CHUNK: { actions: assign({ live: ({ context, event }) => withChunk(context.live, event.chunk, context.events) }) },
        END: { target: RunViewState.Finished, actions: assign({ run: ({ event }) => event.run, live: undefined }) },
        STREAM_FAILED: { target: RunViewState.Failed, actions: assign({ problem: ({ event }) => event.message, live: undefined }) },
        ABORT: { actions: spawnChild('abortRun', { input: ({ context }) => ({ traceId: context.traceId ?? '' }) }) },
      },
    },
    [RunViewState.Finished]: {
      on: {
        START: RunViewState.Starting,
        SCRUB: { actions: assign({ position: ({ event }) => event.position }) },
      },
    },
    [RunViewState.Failed]: {
      on: { START: RunViewState.Starting },
    },
    [RunViewState.Loading]: {
      invoke: {
        src: 'loadRun',
        input: ({ context }) => ({ traceId: context.traceId ?? '' }),
        onDone: [
          {
            // A run still under way (started elsewhere, or left and opened again), or parked until
            // its wait is answered, is followed live from what is logged so far; the stream's
            // repeats of those events are dropped.
            guard: ({ event }) => event.output.run?.status === 'running' || event.output.run?.status === 'waiting',
            target: RunViewState.Streaming,
            actions: assign(({ event }) => ({ events: event.output.events, run: event.output.run, position: undefined })),
          },
          {
            target: RunViewState.Replay,
            actions: assign(({ event }) => ({ events: event.output.events, run: event.output.run, position: Math.max(0, event.output.events.length - 1) })),
          },
        ],
        onError: { target: RunViewState.Failed, actions: assign({ problem: ({ event }) => messageOf(event.error) }) },
      },
    },
    [RunViewState.Replay]: {
      on: {
        START: RunViewState.Starting,
        SCRUB: { actions: assign({ position: ({ event }) => event.position }) },
      },
    },
  },
});
