import { describe, expect, it } from 'vitest';
import { EVENT_ORDER, type ResumeAt } from '../../src/events/eventOrder.js';
import { AgentEventType } from '../../src/events/eventTypes.js';
import { reactMachine } from '../../src/machines/reactMachine.js';
import { ReactState } from '../../src/machines/reactState.js';

/**
 * The event-order table (src/events/eventOrder.ts) against the statechart it describes: the test
 * walks the machine's own definition, reads which events each transition records (its `record*`
 * actions), and checks that what may follow each event, and where a run whose log ends with it
 * resumes, are what the table says. The machine and the table cannot drift apart unnoticed.
 */

interface Transition {
  readonly source: string;
  readonly target: string | undefined;
  readonly guard: { readonly type: string; readonly params?: { readonly at?: ResumeAt } } | undefined;
  readonly actions: readonly string[];
}

type RawTransition = { target?: string; guard?: string | { type: string; params?: { at?: ResumeAt } }; actions?: unknown };
type RawState = { always?: RawTransition[]; on?: Record<string, RawTransition | RawTransition[]>; type?: string; states?: Record<string, RawState> };

const config = reactMachine.config as unknown as RawState;

/** Each leaf state (where a run can be), with the `on` of the parent states around it, nearest first, the root's last. */
const leaves = new Map<string, { node: RawState; outer: RawState['on'][] }>();
(function walk(states: Record<string, RawState>, outer: RawState['on'][]) {
  for (const [name, node] of Object.entries(states)) {
    if (node.states) walk(node.states, [node.on, ...outer]);
    else leaves.set(name, { node, outer });
  }
})(config.states ?? {}, [config.on]);

function transition(source: string, raw: RawTransition): Transition {
  const actions = ([] as unknown[]).concat(raw.actions ?? []).map((a) => (typeof a === 'string' ? a : (a as { type: string }).type));
  const guard = typeof raw.guard === 'string' ? { type: raw.guard } : raw.guard;
  // A target names the state by its path (`#react.ending.concluding`): the leaf is its last part.
  return { source, target: raw.target?.split('.').at(-1), guard, actions };
}

/** Every transition of a state: its own, and those of the parent states around it that no nearer state overrides. */
function transitionsOf(state: string): Transition[] {
  const { node, outer } = leaves.get(state) as { node: RawState; outer: RawState['on'][] };
  if (node.type === 'final') return [];
  const handled = new Set(Object.keys(node.on ?? {}));
  const raws = [...(node.always ?? []), ...Object.values(node.on ?? {}).flat()];
  for (const on of outer) {
    for (const [event, raw] of Object.entries(on ?? {})) if (!handled.has(event)) raws.push(...[raw].flat());
    for (const event of Object.keys(on ?? {})) handled.add(event);
  }
  return raws.map((raw) => transition(state, raw)).filter((t) => t.target !== undefined);
}

const eventTypes = new Set<string>(Object.values(AgentEventType));

/** The events a transition records, in order: `recordToolRequested` records `tool.requested`; `recordEnding` the ending its target names. */
function recorded(t: Transition): string[] {
  return t.actions
    .filter((action) => action.startsWith('record'))
    .map((action) => {
      if (action === 'recordEnding') return t.target === ReactState.Error ? AgentEventType.RunFailed : AgentEventType.RunCompleted;
      const type = action
        .slice('record'.length)
        .replace(/([a-z])([A-Z])/g, '$1.$2')
        .toLowerCase();
      expect(eventTypes, `${action} names no event type`).toContain(type);
      return type;
    });
}

const isResume = (t: Transition) => t.guard?.type === 'resumesAt';

/**
 * The first events recorded from `state` on, through transitions that record nothing. `memoryDone`:
 * the run has left `savingMemory`, so `concluding` does not save again (its `savesMemory` guard).
 */
function firstRecorded(state: string, memoryDone: boolean, seen = new Set<string>()): Set<string> {
  const found = new Set<string>();
  const key = `${state}:${memoryDone}`;
  if (seen.has(key)) return found;
  seen.add(key);
  for (const t of transitionsOf(state)) {
    if (isResume(t) || (memoryDone && t.guard?.type === 'savesMemory')) continue;
    const events = recorded(t);
    if (events.length > 0) found.add(events[0] as string);
    else for (const event of firstRecorded(t.target as string, memoryDone || state === ReactState.SavingMemory, seen)) found.add(event);
  }
  return found;
}

const all = [...leaves.keys()].flatMap(transitionsOf);
const resumes = new Map(all.filter(isResume).map((t) => [t.guard?.params?.at as ResumeAt, t]));
/** What may follow each event in the machine, the states it is recorded into, and what is recorded with it after it. */
const machineFollows = new Map<string, Set<string>>();
const statesAfter = new Map<string, Set<string>>();
const recordedWith = new Map<string, { rest: string[]; target: string }>();
for (const t of all.filter((t) => !isResume(t))) {
  const events = recorded(t);
  events.forEach((event, i) => {
    const follows = machineFollows.get(event) ?? new Set<string>();
    machineFollows.set(event, follows);
    if (i < events.length - 1) {
      follows.add(events[i + 1] as string);
      recordedWith.set(event, { rest: events.slice(i + 1), target: t.target as string });
      return;
    }
    for (const next of firstRecorded(t.target as string, t.source === ReactState.SavingMemory)) follows.add(next);
    statesAfter.set(event, (statesAfter.get(event) ?? new Set<string>()).add(t.target as string));
  });
}

/** The two endings as one: which of them comes depends on the run, not on the transitions. */
const ending = (types: Iterable<string>) => new Set([...types].map((type) => (type === AgentEventType.RunFailed ? AgentEventType.RunCompleted : type)));

describe('the event-order table agrees with the statechart', () => {
  // run.forked is written by forkRun when it makes a fork's log, never by the machine.
  const machineTypes = Object.values(AgentEventType).filter((type) => type !== AgentEventType.RunForked);
  const checked = machineTypes.filter((type) => type !== AgentEventType.RunResumed);

  it('should find every event type recorded by some transition of the machine', () => {
    const types = new Set([...machineFollows.keys(), ...[...resumes.values()].flatMap(recorded)]);
    expect([...types].sort()).toEqual([...machineTypes].sort());
  });

  it.each(checked)('should let after %s what the machine may record next', (type) => {
    expect(ending(EVENT_ORDER[type].next)).toEqual(ending(machineFollows.get(type) ?? []));
  });

  const resumable = checked.filter((type) => EVENT_ORDER[type].resumeAt !== undefined);

  it.each(resumable.filter((type) => recordedWith.has(type)))('should resume a log ending with %s, recorded with what follows it, where that transition goes, recording the rest', (type) => {
    const { resumeAt } = EVENT_ORDER[type];
    const resume = resumes.get(resumeAt as ResumeAt);
    expect(resume, `the machine has no resume transition for ${resumeAt}`).toBeDefined();
    // Recorded on one transition with what follows it: a resumed run records the rest itself.
    const with_ = recordedWith.get(type) as { rest: string[]; target: string };
    expect(resume?.target).toBe(with_.target);
    expect(recorded(resume as Transition)).toEqual([AgentEventType.RunResumed, ...with_.rest]);
  });

  it.each(resumable.filter((type) => !recordedWith.has(type)))('should resume a log ending with %s where the machine stood after it', (type) => {
    const { resumeAt, waits } = EVENT_ORDER[type];
    const resume = resumes.get(resumeAt as ResumeAt);
    expect(resume, `the machine has no resume transition for ${resumeAt}`).toBeDefined();
    expect(recorded(resume as Transition)).toEqual([AgentEventType.RunResumed]);
    const entered = [resumeAt as ResumeAt, ...waits].map((at) => resumes.get(at)?.target);
    expect(new Set(entered)).toEqual(statesAfter.get(type));
  });

  it('should resume nowhere after an ending, and end in the final states', () => {
    expect(EVENT_ORDER[AgentEventType.RunCompleted].resumeAt).toBeUndefined();
    expect(EVENT_ORDER[AgentEventType.RunFailed].resumeAt).toBeUndefined();
    expect(statesAfter.get(AgentEventType.RunCompleted)).toEqual(new Set([ReactState.Done]));
    expect(statesAfter.get(AgentEventType.RunFailed)).toEqual(new Set([ReactState.Error]));
  });
});
