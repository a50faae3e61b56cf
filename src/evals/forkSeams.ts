import { isDeepStrictEqual } from 'node:util';
import type { ForkChanges } from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { forkRun, type ForkRunOptions } from '../host/forkRun.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import type { SeamLaunch, SeamOutcome } from './seamTypes.js';

// The seams that replay a case's recorded run in a forked run (`forkRun`): the eval run's log is
// the fork's, whose `run.forked` names the case's log and the fork point.

/** The recorded calls of a run by iteration, with their results, to answer matching live calls from. */
export function recordedToolCalls(events: readonly AgentEvent[]): NonNullable<ForkChanges['replayTools']> {
  const calls: NonNullable<ForkChanges['replayTools']> = {};
  const requested = new Map<string, { tool: string; input: unknown }>();
  for (const event of events) {
    if (event.type === AgentEventType.ToolRequested) requested.set(event.data.idempotencyKey, { tool: event.data.tool, input: event.data.input });
    if (event.type !== AgentEventType.ToolCompleted) continue;
    const call = requested.get(event.data.idempotencyKey);
    if (call === undefined) continue;
    const { ok, output, error } = event.data;
    calls[String(event.iteration)] = { ...call, ok, ...(output !== undefined && { output }), ...(error !== undefined && { error: { ...error } }) };
  }
  return calls;
}

/** The recorded model answers by iteration (the last one of each, after a resend). */
function recordedAnswers(events: readonly AgentEvent[], after: number): Record<number, unknown> {
  const answers: Record<number, unknown> = {};
  for (const event of events) if (event.type === AgentEventType.ModelAnswered && event.iteration > after && event.data.originalLength === undefined) answers[event.iteration] = event.data.text;
  return answers;
}

/** The last iteration the recorded run asked the model in. */
function lastModelIteration(events: readonly AgentEvent[]): number {
  let last = 1;
  for (const event of events) if (event.type === AgentEventType.ModelRequested) last = Math.max(last, event.iteration);
  return last;
}

/**
 * Runs one fork of the case's recorded run and says, for each tool call the fork made live from
 * its fork point, whether the record answered it (same tool and input) or the tool ran.
 */
async function runFork(launch: SeamLaunch, at: number, changes: Pick<ForkRunOptions, 'answers' | 'replayTools'>): Promise<SeamOutcome> {
  const common = {
    from: launch.evalCase.logFile,
    at,
    flow: launch.flowPath,
    logPath: launch.logPath,
    ...changes,
    ...(launch.env !== undefined && { env: launch.env }),
    ...(launch.allowFiles !== undefined && { allowFiles: launch.allowFiles }),
    ...(launch.timeoutMs !== undefined && { timeoutMs: launch.timeoutMs }),
    ...(launch.signal !== undefined && { signal: launch.signal }),
  };
  if (launch.fork !== undefined) await launch.fork(common);
  else {
    // An eval run's log is a report's evidence, not a run to resume after a crash.
    const fork = await forkRun({ ...common, fsync: 'never' });
    try {
      await fork.finished();
    } catch (error) {
      if (!isRunWaiting(error)) throw error;
    }
  }
  const { events } = await readJsonlLog(launch.logPath);
  const recorded = changes.replayTools ?? {};
  const prefixEnd = (events[1]?.type === AgentEventType.RunForked ? events[1].data.atSeq : 0) + 1;
  const toolCalls = events
    .filter((event): event is Extract<AgentEvent, { type: 'tool.requested' }> => event.type === AgentEventType.ToolRequested && event.seq > prefixEnd)
    .map((event) => {
      const call = recorded[String(event.iteration)];
      const same = call !== undefined && call.tool === event.data.tool && isDeepStrictEqual(call.input, event.data.input);
      return { iteration: event.iteration, tool: event.data.tool, source: same ? ('recorded' as const) : ('live' as const) };
    });
  return { forkedAt: at, toolCalls };
}

/** `model`: the recorded prefix up to its last model call, that call live, the rest scripted from the record. */
export async function fromLastModelCall(launch: SeamLaunch): Promise<SeamOutcome> {
  const at = lastModelIteration(launch.evalCase.events);
  return runFork(launch, at, { answers: recordedAnswers(launch.evalCase.events, at), replayTools: recordedToolCalls(launch.evalCase.events) });
}

/** `all`: forked at iteration 1, the rest live; recorded tool results where the call matches, live tools where it does not. */
export async function allLive(launch: SeamLaunch): Promise<SeamOutcome> {
  return runFork(launch, 1, { replayTools: recordedToolCalls(launch.evalCase.events) });
}
