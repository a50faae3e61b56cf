import { setTimeout as sleep } from 'node:timers/promises';
import { TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { ToolContext } from '../tool.js';

/** States after which the remote task will not change by itself. */
const ENDED = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

/** How often a task is asked for when the remote does not let a caller subscribe to it again. */
const POLL_INTERVAL_MS = 1_000;


/**
 * What one call has learnt of its remote task so far: the task as last seen (its artifacts as they
 * came), its id, and whether it answered with a plain message instead. Each event is also the
 * call's activity (`context.progress`), and the first time the task's id is known it is handed to
 * `context.attach`, so the run's log records it before the task ends (`tool.attached`).
 */
export class RemoteTask {
  taskId = '';
  last: Task | undefined = undefined;
  /** The remote's answer when it gave a message, not a task. */
  message: Message | undefined = undefined;
  readonly #context: ToolContext;
  /** The last activity reported. */
  #said = '';

  constructor(context: ToolContext) {
    this.#context = context;
    const attached = context.attached?.taskId;
    if (attached !== undefined && attached !== '') this.taskId = attached;
  }

  /** True once the task is in a state it will not leave by itself (or the remote answered with a message). */
  get ended(): boolean {
    return this.message !== undefined || (this.last?.status !== undefined && ENDED.has(this.last.status.state));
  }

  /** Takes one event of a stream. */
  take(event: StreamResponse): void {
    const payload = event.payload;
    if (payload?.$case === 'message') {
      this.message = payload.value;
    } else if (payload?.$case === 'task') {
      this.last = payload.value;
      this.#known(payload.value.id);
      this.#report(stateWords(payload.value.status?.state, textOf(payload.value.status?.message)));
    } else if (payload?.$case === 'statusUpdate') {
      this.#known(payload.value.taskId);
      if (this.last && payload.value.status) this.last = { ...this.last, status: payload.value.status };
      this.#report(stateWords(payload.value.status?.state, textOf(payload.value.status?.message)));
    } else if (payload?.$case === 'artifactUpdate' && payload.value.artifact) {
      this.#known(payload.value.taskId);
      const { artifact } = payload.value;
      if (this.last) this.last = { ...this.last, artifacts: [...this.last.artifacts, artifact] };
      this.#report(`artifact ${artifact.name || artifact.artifactId}${textOf(artifact) === '' ? '' : `: ${textOf(artifact)}`}`);
    }
  }

  /** Takes the task as `tasks/get` gives it: a new state is the call's activity too. */
  set(task: Task): void {
    const before = this.last?.status?.state;
    this.last = task;
    this.#known(task.id);
    if (task.status?.state !== before) this.#report(stateWords(task.status?.state, textOf(task.status?.message)));
  }

  #known(taskId: string): void {
    if (taskId === '' || this.taskId === taskId) return;
    const first = this.taskId === '';
    this.taskId = taskId;
    // Said once, as soon as the remote names its task: a crash after this re-attaches, never re-sends.
    if (first && this.#context.attached === undefined) this.#context.attach?.({ taskId });
  }

  #report(message: string): void {
    // The task as a subscription begins with it, or as it is polled, repeats what was said already.
    if (message === '' || message === this.#said) return;
    this.#said = message;
    this.#context.progress?.({ message: message.slice(0, 500) });
  }
}

/**
 * Follows a remote task this call started before (its id logged by `tool.attached`) to its end,
 * without sending the message again: the task as it stands (`tasks/get`), then its updates
 * (`tasks/resubscribe`), or, when the remote does not let a caller subscribe again, `tasks/get`
 * every second. A task the remote no longer knows fails the call with `TOOL_FAILED`.
 *
 * @example
 * ```ts
 * const task = new RemoteTask(context); // context.attached: { taskId }
 * await reattach(client, 'desk', task, signal);
 * ```
 */
export async function reattach(client: Client, name: string, task: RemoteTask, signal: AbortSignal): Promise<void> {
  try {
    task.set(await client.getTask({ tenant: '', id: task.taskId }, { signal }));
  } catch (error) {
    if (signal.aborted) throw error;
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_FAILED, `A2A agent '${name}' no longer knows the task ${task.taskId} this call started before the run stopped: ${error instanceof Error ? error.message : String(error)}`, {
        hint: 'the remote agent lost its tasks (it restarted without keeping them): send the task again as a new call',
      }),
    );
  }
  await follow(client, task, signal);
}

/**
 * Follows a remote task to its end: its updates as the remote streams them (`tasks/resubscribe`),
 * then, if the stream ends first (or the remote does not stream), the task itself, every second.
 *
 * @example
 * ```ts
 * task.set(sentTask);
 * await follow(client, task, signal);
 * ```
 */
export async function follow(client: Client, task: RemoteTask, signal: AbortSignal): Promise<void> {
  if (task.ended || task.taskId === '') return;
  try {
    for await (const event of client.resubscribeTask({ tenant: '', id: task.taskId }, { signal })) {
      task.take(event);
      if (task.ended) return;
    }
  } catch (error) {
    if (signal.aborted) throw error;
    // Not supported by the remote, or the task ended between the two requests: ask for it below.
  }
  while (!task.ended) {
    task.set(await client.getTask({ tenant: '', id: task.taskId }, { signal }));
    if (!task.ended) await sleep(POLL_INTERVAL_MS, undefined, { signal });
  }
}

/** A task's state and what it said, for the activity: `working: looking up the order`. */
function stateWords(state: TaskState | undefined, said: string): string {
  const named = stateName(state);
  return said === '' ? named : `${named}: ${said}`;
}

/** The text of a message's or an artifact's parts. */
export function textOf(holder: { readonly parts: Message['parts'] } | undefined): string {
  return (holder?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

/** A task state as A2A's JSON names it: `input-required`. */
export function stateName(state: TaskState | undefined): string {
  return state === undefined ? 'without a state' : (TaskState[state] ?? String(state)).replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}
