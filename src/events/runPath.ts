import type { WaitStart } from '../contracts/schema-types.js';
import { AgentEventType, isTerminal, type AgentEvent } from './eventTypes.js';
import { mayFollow } from './eventOrder.js';
import { iterationLimit } from './stopConditions.js';
import { waitAfterApproval, waitAfterRequest } from './waits.js';

/** What the log says so far: enough to judge the next event. */
interface PathState {
  readonly traceId: string;
  readonly allowedTools: ReadonlySet<string>;
  readonly maxIterations: number;
  readonly conversation: boolean;
  /** What the run was started with, for the waits each call must record (`waits.ts`). */
  readonly agent: Extract<AgentEvent, { type: 'run.started' }>['data']['agent'];
  readonly tools: Extract<AgentEvent, { type: 'run.started' }>['data']['tools'];
  /** The last event that is not a `run.resumed` or `run.forked`. */
  last: AgentEvent;
  lastSeq: number;
  iteration: number;
  /** The tool call of the current iteration, once requested, and the answer it waits for, if any. */
  call: { readonly tool: string; readonly idempotencyKey: string; waits: WaitStart['for'] | undefined } | undefined;
  /** The ending the memory step was asked to record, once requested. */
  ending: AgentEventType | undefined;
  /** The key of the question to a person the run waits on, once asked. */
  question: string | undefined;
  /** The run sent its output back for repair already (it does so once). */
  repaired: boolean;
  /** The answers sent back for breaking the answer format so far (onInvalidAnswer.repair). */
  answerRepairs: number;
}

/** Checks a run's log one event at a time: see {@link createRunPathCheck}. */
export interface RunPathCheck {
  /** `undefined` when `event` may come next, else why it may not. The check then stays failed. */
  next(event: AgentEvent): string | undefined;
}

/**
 * A check that a run's log is a path the statechart can take, event by event: it starts with
 * `run.started` (seq 1); seqs are contiguous; every event is of the run; each iteration asks the
 * model once, then calls at most one tool, and only a tool of the agent's `allowedTools`, whose
 * result comes back under the call's own key; a call records the wait the run's config gives it
 * (approval for a tool in `requiresApproval`, the client's result for a client tool), and a call
 * waiting for approval gets its decision (`tool.approved` or `tool.denied`) before any result; no iteration goes past `maxIterations`; a run with
 * a conversation saves its turn (`memory.requested`, `memory.saved`) before its ending, and the
 * ending is the one the save was asked to record; nothing follows the ending. Every record can be
 * well formed while the log as a whole is impossible (records appended, spliced or dropped by
 * hand, or by a bug); replay and resume trust only the part of a log that passes.
 *
 * Pure; costs a few comparisons per event.
 *
 * @example
 * ```ts
 * const check = createRunPathCheck();
 * for (const event of events) {
 *   const why = check.next(event);
 *   if (why) throw new Error(`event ${event.seq}: ${why}`);
 * }
 * ```
 */
export function createRunPathCheck(): RunPathCheck {
  let state: PathState | undefined;
  let failed: string | undefined;

  const judge = (event: AgentEvent): string | undefined => {
    if (state === undefined) {
      if (event.type !== AgentEventType.RunStarted) return `a run's log begins with run.started, not ${event.type}`;
      if (event.seq !== 1) return `the first event has seq ${event.seq}, not 1`;
      if (event.iteration !== 0) return `run.started is at iteration ${event.iteration}, not 0`;
      state = {
        traceId: event.traceId,
        allowedTools: new Set(event.data.agent.allowedTools),
        maxIterations: event.data.agent.maxIterations,
        conversation: event.data.conversationId !== undefined,
        agent: event.data.agent,
        tools: event.data.tools,
        last: event,
        lastSeq: 1,
        iteration: 0,
        call: undefined,
        ending: undefined,
        question: undefined,
        repaired: false,
        answerRepairs: 0,
      };
      return undefined;
    }
    const s = state;
    if (event.traceId !== s.traceId) return `the event belongs to run ${event.traceId}, not ${s.traceId}`;
    if (event.seq !== s.lastSeq + 1) return `expected seq ${s.lastSeq + 1}, found ${event.seq}`;
    if (isTerminal(s.last)) return `nothing may follow the run's ending (${s.last.type} at seq ${s.last.seq})`;
    if (event.type === AgentEventType.RunForked) {
      // A fork says so once, right after its own start: its parent's prefix follows.
      if (event.seq !== 2) return `run.forked is at seq ${event.seq}; a fork records it right after run.started, at seq 2`;
      if (event.iteration !== 0) return `run.forked is at iteration ${event.iteration}, not 0`;
      s.lastSeq = event.seq;
      return undefined;
    }
    if (event.type === AgentEventType.RunResumed) {
      if (event.data.afterSeq !== s.lastSeq) return `run.resumed says it follows seq ${event.data.afterSeq}, but it follows seq ${s.lastSeq}`;
      if (event.iteration !== s.iteration) return `run.resumed is at iteration ${event.iteration}, not ${s.iteration}`;
      s.lastSeq = event.seq;
      return undefined;
    }
    const why = judgeStep(s, event);
    if (why !== undefined) return why;
    s.last = event;
    s.lastSeq = event.seq;
    return undefined;
  };

  return {
    next(event) {
      failed ??= judge(event);
      return failed;
    },
  };
}

function judgeStep(s: PathState, event: AgentEvent): string | undefined {
  const from = s.last.type;
  if (event.type === AgentEventType.MemoryRequested) {
    if (!s.conversation) return 'memory.requested in a run that keeps no conversation';
    if (!mayFollow(from, event.type)) return `memory.requested cannot follow ${from}`;
    if (event.iteration !== s.iteration) return `memory.requested is at iteration ${event.iteration}, not ${s.iteration}`;
    s.ending = event.data.ending.type;
    return undefined;
  }
  if (!mayFollow(from, event.type)) return `${event.type} cannot follow ${from}`;
  switch (event.type) {
    case AgentEventType.ModelRequested: {
      const iteration = s.iteration + 1;
      if (event.iteration !== iteration) return `model.requested is at iteration ${event.iteration}, not ${iteration}`;
      if (iteration > s.maxIterations) return `iteration ${iteration} is past maxIterations (${s.maxIterations})`;
      s.iteration = iteration;
      s.call = undefined;
      return undefined;
    }
    case AgentEventType.ToolRequested: {
      if (event.iteration !== s.iteration) return `tool.requested is at iteration ${event.iteration}, not ${s.iteration}`;
      if (!s.allowedTools.has(event.data.tool)) return `the tool "${event.data.tool}" is not in the agent's allowedTools`;
      const why = judgeWait(event.type, event.data.wait, waitAfterRequest(s.agent, s.tools, event.data.tool));
      if (why !== undefined) return why;
      s.call = { tool: event.data.tool, idempotencyKey: event.data.idempotencyKey, waits: event.data.wait?.for };
      return undefined;
    }
    case AgentEventType.ToolApproved:
    case AgentEventType.ToolDenied: {
      const why = judgeAnswerTo(s, event);
      if (why !== undefined) return why;
      if (event.type === AgentEventType.ToolApproved) {
        const wrong = judgeWait(event.type, event.data.wait, waitAfterApproval(s.agent, s.tools, event.data.tool));
        if (wrong !== undefined) return wrong;
        (s.call as NonNullable<PathState['call']>).waits = event.data.wait?.for;
      }
      return undefined;
    }
    case AgentEventType.ToolCompleted: {
      // A call waiting for a decision has no result before it; a client's result answers its wait.
      if (s.call?.waits === 'approval') return 'tool.completed cannot follow a call that waits for its approval';
      return judgeAnswerTo(s, event);
    }
    case AgentEventType.ToolAttached: {
      // Only a call this process makes has work to attach to: not one waiting for a decision or a client.
      if (event.iteration !== s.iteration) return `tool.attached is at iteration ${event.iteration}, not ${s.iteration}`;
      if (event.data.tool !== s.call?.tool || event.data.idempotencyKey !== s.call.idempotencyKey) return `tool.attached is for ${event.data.tool} (${event.data.idempotencyKey}), not the call requested`;
      if (s.call.waits !== undefined) return `tool.attached cannot follow a call that waits for its ${s.call.waits === 'approval' ? 'approval' : "client's result"}`;
      return undefined;
    }
    case AgentEventType.HumanRequested: {
      if (event.iteration !== s.iteration) return `human.requested is at iteration ${event.iteration}, not ${s.iteration}`;
      if (event.data.key !== `${s.traceId}:${s.iteration}`) return `human.requested has the key ${event.data.key}, not ${s.traceId}:${s.iteration}`;
      if (event.data.wait.for !== 'human') return `human.requested records a wait for ${event.data.wait.for}, not for human`;
      s.question = event.data.key;
      return undefined;
    }
    case AgentEventType.HumanAnswered:
      if (event.iteration !== s.iteration) return `human.answered is at iteration ${event.iteration}, not ${s.iteration}`;
      if (event.data.key !== s.question) return `human.answered is for ${event.data.key}, not the question asked`;
      return undefined;
    case AgentEventType.OutputRejected: {
      if (event.iteration !== s.iteration) return `output.rejected is at iteration ${event.iteration}, not ${s.iteration}`;
      if (s.agent.outputSchema === undefined || s.agent.outputRepair !== true) return 'output.rejected in a run whose agent repairs no output (outputSchema with outputRepair)';
      if (s.repaired) return 'output.rejected a second time: a run repairs its output once';
      if (s.iteration >= iterationLimit(s.agent).limit) return 'output.rejected at the iteration limit: no iteration is left for the repair';
      s.repaired = true;
      return undefined;
    }
    case AgentEventType.AnswerRejected: {
      if (event.iteration !== s.iteration) return `answer.rejected is at iteration ${event.iteration}, not ${s.iteration}`;
      const allowed = s.agent.onInvalidAnswer?.repair ?? 0;
      if (s.answerRepairs >= allowed) return `answer.rejected ${s.answerRepairs + 1} times: the agent repairs at most ${allowed} (onInvalidAnswer.repair)`;
      if (s.iteration >= iterationLimit(s.agent).limit) return 'answer.rejected at the iteration limit: no iteration is left for the repair';
      s.answerRepairs += 1;
      return undefined;
    }
    case AgentEventType.VerificationRequested: {
      if (event.iteration !== s.iteration) return `verification.requested is at iteration ${event.iteration}, not ${s.iteration}`;
      const { verification } = s.agent;
      return verification === undefined || verification === 'off' ? 'verification.requested in a run whose agent does not verify its answers (verification)' : undefined;
    }
    case AgentEventType.RunCompleted:
    case AgentEventType.RunFailed:
      return judgeEnding(s, event);
    default:
      if (event.iteration !== s.iteration) return `${event.type} is at iteration ${event.iteration}, not ${s.iteration}`;
      return undefined;
  }
}

/** The wait an event records must be the one the statechart would record, given the run's config. */
function judgeWait(type: AgentEventType, recorded: WaitStart | undefined, expected: WaitStart | undefined): string | undefined {
  if (recorded?.for === expected?.for) return undefined;
  const say = (wait: WaitStart | undefined) => (wait === undefined ? 'no wait' : `a wait for ${wait.for}`);
  return `${type} records ${say(recorded)}, but the run's config makes it ${say(expected)}`;
}

/** An answer to the current call (a result, an approval, a denial): of this iteration, under the call's own key. */
function judgeAnswerTo(s: PathState, event: Extract<AgentEvent, { type: 'tool.completed' | 'tool.approved' | 'tool.denied' }>): string | undefined {
  if (event.iteration !== s.iteration) return `${event.type} is at iteration ${event.iteration}, not ${s.iteration}`;
  if (event.data.tool !== s.call?.tool || event.data.idempotencyKey !== s.call.idempotencyKey) {
    return `${event.type} is for ${event.data.tool} (${event.data.idempotencyKey}), not the call requested`;
  }
  if (event.type !== AgentEventType.ToolCompleted && s.call.waits !== 'approval') return `${event.type} answers a call that waits for no approval`;
  return undefined;
}

/** A run with a conversation ends after its memory step: as the save said, or blocked by the memory. */
function judgeEnding(s: PathState, event: AgentEvent & { type: 'run.completed' | 'run.failed' }): string | undefined {
  if (event.iteration !== s.iteration) return `${event.type} is at iteration ${event.iteration}, not ${s.iteration}`;
  const from = s.last.type;
  if (!s.conversation) return undefined;
  if (from === AgentEventType.MemorySaved) {
    return event.type === s.ending ? undefined : `the memory step was to end the run with ${s.ending ?? '?'}, not ${event.type}`;
  }
  if (from === AgentEventType.MemoryRequested) {
    return event.data.outcome.reason === 'memory_error' ? undefined : 'only a memory failure ends a run while its turn is being saved';
  }
  return `a run that keeps a conversation saves its turn before it ends (${event.type} follows ${from})`;
}
