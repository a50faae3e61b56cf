import { createInspector } from '@statelyai/inspect';
import type { AnyEventObject } from 'xstate';
import type { AgentEnvelope, ForkParent } from '../contracts/schema-types.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { runSteps, stateAfter, type RunStep } from '../machines/runSteps.js';
import { reactMachine } from '../machines/reactMachine.js';
import { ReactState, stateValueOf } from '../machines/reactState.js';
import { toJsonSafe } from './jsonSafe.js';
import type { InspectorActorMessage, InspectorEventMessage, InspectorMessage, InspectorSnapshotMessage } from './inspectorMessage.js';

let version: string | undefined;

/**
 * The protocol version @statelyai/inspect stamps on its messages (`_version`). The package does not
 * export it, so it is read off one message its own inspector builds: replayed messages then carry
 * exactly what live ones do, whichever version is installed.
 */
export function inspectorProtocolVersion(): string {
  if (version === undefined) {
    let seen: InspectorMessage | undefined;
    createInspector({ send: (message) => (seen = message) }).event('probe', { type: 'probe' });
    version = seen?._version ?? '0.0.0';
  }
  return version;
}

let definition: string | undefined;

/**
 * The REACT statechart's definition as the inspector draws it: `reactMachine.config` serialised the
 * way @statelyai/inspect serialises a live actor's `logic.config` (inline functions become
 * `{ type: name }`), so a replayed run and a live one show the same chart.
 */
export function reactMachineDefinition(): string {
  definition ??= JSON.stringify(toJsonSafe(reactMachine.config));
  return definition;
}

/** The inspector's timestamps are epoch milliseconds as text; a replay uses the events' own times. */
function timeOf(time: string | undefined): string {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return String(Number.isFinite(ms) ? ms : Date.now());
}

/**
 * Where a fork comes from: the run it was forked from and the fork point, as its `run.forked` says.
 *
 * @example
 * ```ts
 * const forkOf: ForkOf = { parent: { traceId: 'order-a1001' }, atIteration: 2, atSeq: 6 };
 * ```
 */
export interface ForkOf {
  readonly parent: ForkParent;
  /** The iteration the fork went live from. */
  readonly atIteration: number;
  /** The parent's events 1..atSeq were taken. */
  readonly atSeq: number;
}

/**
 * A fork's lineage, read off its second event (`run.forked` is always seq 2); undefined for a run
 * that is not a fork.
 *
 * @example
 * ```ts
 * const forkOf = forkOfRun(events); // { parent: { traceId: 'order-a1001', log: '…' }, atIteration: 2, atSeq: 6 }
 * ```
 */
export function forkOfRun(events: readonly AgentEvent[]): ForkOf | undefined {
  return forkOfEvent(events[1]);
}

/** The lineage a `run.forked` event gives; undefined for any other event. */
function forkOfEvent(forked: AgentEvent | undefined): ForkOf | undefined {
  if (forked?.type !== AgentEventType.RunForked) return undefined;
  const { parent, atIteration, atSeq } = forked.data;
  return { parent, atIteration, atSeq };
}

/**
 * The context a replayed snapshot shows: the envelope, the fold of the log up to that event, and
 * for a fork, on every snapshot from its `run.forked` on, the run it was forked from and where
 * (`forkOf`), at the top where the inspector shows it first.
 */
export interface ReplayedContext {
  readonly forkOf?: ForkOf;
  readonly envelope: AgentEnvelope;
}

/**
 * The actor registration that opens a replayed run: session id = trace id, the REACT machine's
 * definition, and the state before the first event.
 */
export function replayActorMessage(traceId: string, time?: string): InspectorActorMessage {
  const context: ReplayedContext = { envelope: emptyEnvelope(traceId) };
  return {
    type: '@xstate.actor',
    name: reactMachine.id,
    sessionId: traceId,
    rootId: traceId,
    parentId: undefined,
    id: `${traceId}:actor`,
    createdAt: timeOf(time),
    _version: inspectorProtocolVersion(),
    definition: reactMachineDefinition(),
    snapshot: toJsonSafe({ status: 'active', value: ReactState.Starting, context }) as InspectorActorMessage['snapshot'],
  };
}

/**
 * What one step of a log becomes in the inspector: the log event, sent to the actor, then the
 * snapshot after it — its value the statechart state the event was recorded in (nested in its
 * parent state, as a live snapshot's is), its context the
 * folded envelope, its status `done` once the run has ended (both `done` and `error` are final).
 */
export function replayStepMessages(step: RunStep, forkOf?: ForkOf): [InspectorEventMessage, InspectorSnapshotMessage] {
  const { event } = step;
  const sessionId = event.traceId;
  const createdAt = timeOf(event.time);
  const _version = inspectorProtocolVersion();
  const wireEvent = toJsonSafe(event) as AnyEventObject;
  const ended = isTerminal(event);
  const outcome = step.envelope.observability.outcome;
  const context: ReplayedContext = { ...(forkOf !== undefined && { forkOf }), envelope: step.envelope };
  return [
    { type: '@xstate.event', event: wireEvent, sourceId: undefined, sessionId, rootId: sessionId, id: event.id, createdAt, _version },
    {
      type: '@xstate.snapshot',
      event: wireEvent,
      snapshot: toJsonSafe({
        status: ended ? 'done' : 'active',
        value: stateValueOf(step.state),
        context,
        ...(ended && outcome !== undefined && { output: outcome }),
      }) as InspectorSnapshotMessage['snapshot'],
      sessionId,
      rootId: sessionId,
      id: `${event.id}:snapshot`,
      createdAt,
      _version,
    },
  ];
}

/**
 * A finished (or unfinished) run's log as inspector messages, in order: the actor registration,
 * then for each event the event and the snapshot after it (see {@link replayStepMessages}).
 * Empty for an empty log.
 *
 * @example
 * ```ts
 * const messages = replayMessages(events); // 1 + 2 × events.length
 * ```
 */
export function replayMessages(events: readonly AgentEvent[]): InspectorMessage[] {
  const first = events[0];
  if (!first) return [];
  const forkOf = forkOfRun(events);
  // From run.forked (seq 2) on, as a follow learns it (createReplayCursor).
  return [replayActorMessage(first.traceId, first.time), ...runSteps(events).flatMap((step, i) => replayStepMessages(step, i >= 1 ? forkOf : undefined))];
}

/**
 * Turns events into inspector messages one at a time, as they arrive (a run followed on a
 * cluster): the first event also registers the actor. Gives the same messages as
 * {@link replayMessages} would for the whole log.
 *
 * @example
 * ```ts
 * const cursor = createReplayCursor();
 * for (const event of events) send(...cursor.next(event));
 * ```
 */
export function createReplayCursor(): { next(event: AgentEvent): InspectorMessage[] } {
  let envelope: AgentEnvelope | undefined;
  let forkOf: ForkOf | undefined;
  return {
    next(event) {
      const messages: InspectorMessage[] = [];
      if (envelope === undefined) {
        messages.push(replayActorMessage(event.traceId, event.time));
        envelope = emptyEnvelope(event.traceId);
      }
      // The same fold and state mapping as runSteps, one event at a time.
      envelope = evolve(envelope, event);
      forkOf ??= forkOfEvent(event);
      messages.push(...replayStepMessages({ event, state: stateAfter(event), envelope }, forkOf));
      return messages;
    },
  };
}
