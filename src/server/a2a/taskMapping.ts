/**
 * How a Redflow run reads as an A2A task: the one table from a run's events to A2A task states,
 * the words of a wait (the `input-required` status message) and of an ending, and how the next
 * message on a waiting task becomes the answer to its wait. Pure: the executor and the task store
 * (after a restart, a task is read back from its run's log) both read it.
 */
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { RunOutcome } from '../../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import { pendingWait, type GivenAnswer, type RunWait } from '../../events/pendingWait.js';
import { ErrorCode, errorInfo } from '../../errors.js';

/**
 * The A2A state a run is in after each kind of event; events not named here leave the state as
 * it was (`working` once the run started). Waits are read off the log with `pendingWait`, not
 * from this table: a `tool.requested` waits only when it carries `wait`.
 */
const STATE_AFTER_EVENT: Partial<Readonly<Record<AgentEvent['type'], TaskState>>> = {
  [AgentEventType.RunStarted]: TaskState.TASK_STATE_WORKING,
  [AgentEventType.RunResumed]: TaskState.TASK_STATE_WORKING,
};

/** The A2A state of a run's ending: an abort is a cancel, a final answer (or a partial one, or a hand-off) a completion. */
const STATE_OF_OUTCOME: Readonly<Record<RunOutcome['status'], TaskState>> = {
  done: TaskState.TASK_STATE_COMPLETED,
  done_partial: TaskState.TASK_STATE_COMPLETED,
  delegate: TaskState.TASK_STATE_COMPLETED,
  escalate: TaskState.TASK_STATE_FAILED,
  blocked: TaskState.TASK_STATE_FAILED,
};

/** Where a run stands, as A2A says it. */
export interface TaskStanding {
  readonly state: TaskState;
  /** What the agent says with the state: the wait's question, the answer, or why it failed. */
  readonly text?: string;
  /** The run's answer when it ended with one: the task's artifact. */
  readonly answer?: string;
  /** The wait the run is parked in (`input-required`). */
  readonly wait?: RunWait;
}

/**
 * Where a run stands after the events so far: `input-required` while it waits, its ending's state
 * once it ended, `working` while under way, `submitted` before its first event.
 *
 * @example
 * ```ts
 * const { state, text } = standingOf(events); // TaskState.TASK_STATE_INPUT_REQUIRED, 'May I refund 120 EUR?'
 * ```
 */
export function standingOf(events: readonly AgentEvent[]): TaskStanding {
  const last = events[events.length - 1];
  if (last === undefined) return { state: TaskState.TASK_STATE_SUBMITTED };
  if (last.type === AgentEventType.RunCompleted || last.type === AgentEventType.RunFailed) return standingOfOutcome(last.data.outcome);
  // A run resumed into its wait records run.resumed only once it has the answer: it is under way.
  const wait = last.type === AgentEventType.RunResumed ? undefined : pendingWait(events);
  if (wait !== undefined) return { state: TaskState.TASK_STATE_INPUT_REQUIRED, text: waitText(wait), wait };
  return { state: STATE_AFTER_EVENT[last.type] ?? TaskState.TASK_STATE_WORKING };
}

function standingOfOutcome(outcome: RunOutcome): TaskStanding {
  if (outcome.status === 'blocked' && outcome.reason === 'aborted') {
    return { state: TaskState.TASK_STATE_CANCELED, text: outcome.error?.message ?? 'the run was aborted' };
  }
  const state = STATE_OF_OUTCOME[outcome.status];
  if (state === TaskState.TASK_STATE_COMPLETED) {
    const answer = outcome.answer ?? (outcome.handoff === undefined ? '' : `handed off to ${outcome.handoff.agentId}: ${outcome.handoff.task}`);
    return { state, text: answer, answer };
  }
  const why = outcome.error?.message ?? outcome.question?.question ?? outcome.detail ?? outcome.reason;
  return { state, text: `${outcome.status} (${outcome.reason}): ${why}` };
}

/** The status message of a wait: what the run needs, and how to give it in the next message. */
export function waitText(wait: RunWait): string {
  if (wait.kind === 'human') return wait.question?.question ?? 'the agent has a question';
  const input = JSON.stringify(wait.input);
  if (wait.kind === 'approval') return `May I call ${wait.tool} with ${input}? Answer "approve" or "deny" (a reason may follow).`;
  return `Run the tool ${wait.tool} with ${input} and answer with its result: a data part { "ok": true, "output": … } or { "ok": false, "error": "…" }.`;
}

/** A message's text parts joined, or `undefined` when it has none. */
export function textOf(message: Message): string | undefined {
  const texts = message.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
  return texts.length === 0 ? undefined : texts.join('\n');
}

/** A message's first data part's value, or `undefined`. */
export function dataOf(message: Message): unknown {
  for (const part of message.parts) if (part.content?.$case === 'data') return part.content.value as unknown;
  return undefined;
}

/**
 * A run's input from the message that starts a task: its text, or its data when it has no text.
 *
 * @example
 * ```ts
 * inputOf(userMessage); // 'Where is order A-1001?'
 * ```
 */
export function inputOf(message: Message): unknown {
  return textOf(message) ?? dataOf(message) ?? '';
}

/**
 * The answer the next message on a waiting task gives: a person's answer to a question is the
 * message's text; an approval is a text starting with approve/yes or deny/no (what follows is the
 * reason) or a data part `{ decision, reason? }`; a client tool's result is a data part
 * `{ ok, output | error }`. `undefined` when the message gives none of these for this wait.
 */
export function answerOfMessage(wait: RunWait, message: Message): GivenAnswer | undefined {
  const target = { idempotencyKey: wait.idempotencyKey };
  const text = textOf(message)?.trim();
  const data = dataOf(message);
  if (wait.kind === 'human') return text === undefined || text === '' ? undefined : { kind: 'human', text, ...target };
  if (wait.kind === 'approval') {
    const decided = isRecord(data) && typeof data.decision === 'string' ? `${data.decision} ${typeof data.reason === 'string' ? data.reason : ''}` : text;
    const match = decided === undefined ? null : /^\s*(approve|approved|yes|deny|denied|no)\b[\s:,.-]*(.*)$/is.exec(decided);
    if (match === null) return undefined;
    const approved = /^(approve|approved|yes)$/i.test(match[1] as string);
    const reason = (match[2] ?? '').trim();
    return { kind: 'approval', approved, ...(reason !== '' && { reason }), ...target };
  }
  if (!isRecord(data) || typeof data.ok !== 'boolean') return undefined;
  if (data.ok) return { kind: 'client', result: { ok: true, output: data.output }, ...target };
  const message_ = typeof data.error === 'string' ? data.error : 'the client tool failed';
  return { kind: 'client', result: { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, message_) }, ...target };
}

/** An agent's message with one text part. */
export function agentMessage(text: string, ids: { readonly taskId: string; readonly contextId: string; readonly messageId: string }): Message {
  return { ...ids, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/**
 * A task read back from its run's log (after a restart the SDK's store has no copy): its state, the
 * status message, the run's input as the first message and its answer as the artifact.
 */
export function taskOfLog(events: readonly AgentEvent[], contextId: string): Task {
  const taskId = events[0]?.traceId ?? '';
  const standing = standingOf(events);
  const first = events[0];
  const input = first?.type === AgentEventType.RunStarted ? first.data.input : '';
  const ids = { taskId, contextId };
  const userMessage: Message = {
    ...ids,
    messageId: `${taskId}:input`,
    role: Role.ROLE_USER,
    parts: [textPart(typeof input === 'string' ? input : JSON.stringify(input))],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return {
    id: taskId,
    contextId,
    status: {
      state: standing.state,
      message: standing.text === undefined ? undefined : agentMessage(standing.text, { ...ids, messageId: `${taskId}:${events.length}` }),
      timestamp: events[events.length - 1]?.time,
    },
    artifacts: standing.answer === undefined ? [] : [answerArtifact(taskId, standing.answer)],
    history: [userMessage],
    metadata: { redflowTraceId: taskId },
  };
}

/** The run's answer as the task's one artifact. */
export function answerArtifact(taskId: string, answer: string): Artifact {
  return { artifactId: `${taskId}:answer`, name: 'answer', description: "the run's final answer", parts: [textPart(answer)], metadata: undefined, extensions: [] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
