/**
 * The A2A SDK's `AgentExecutor` over Redflow's run backend: a task is a run, its id the run's
 * trace id. A new task starts a run (`backend.start`), the next message on a task whose run waits
 * answers the wait (`backend.answer`, the API's answer path), a cancel aborts the run
 * (`backend.abort`); what the executor publishes is read off the run's log as it is written
 * (`backend.follow`), so a task shows what the log says, and its run replays, resumes and shows in
 * the editor like any other.
 */
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { RedflowError } from '../../errors.js';
import type { AgentEvent as RunEvent } from '../../events/eventTypes.js';
import type { FlowStore } from '../flowStore.js';
import type { RunBackend } from '../runBackend.js';
import { agentMessage, answerArtifact, answerOfMessage, inputOf, standingOf, waitText } from './taskMapping.js';

/** What an A2A agent made of a flow works with. */
export interface RunExecutorContext {
  readonly flowId: string;
  readonly flows: FlowStore;
  readonly backend: RunBackend;
}

/** States after which the executor publishes nothing more for this call. */
const STOPS = new Set<TaskState>([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED]);

/**
 * The executor of one flow's A2A agent.
 *
 * @example
 * ```ts
 * const executor = createRunExecutor({ flowId: 'support', flows, backend });
 * const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
 * ```
 */
export function createRunExecutor(context: RunExecutorContext): AgentExecutor {
  const { backend } = context;
  /** Tasks whose run this process follows now: a cancel of one is published by its follower. */
  const following = new Set<string>();
  /** The context of each task started or answered here (a cancel's update names it). */
  const contexts = new Map<string, string>();

  /** Publishes what the run does after `events`, until it waits or ends. */
  const follow = async (taskId: string, contextId: string, events: RunEvent[], bus: ExecutionEventBus): Promise<void> => {
    following.add(taskId);
    try {
      let shown = standingOf(events).state;
      for await (const event of backend.follow(taskId, events[events.length - 1]?.seq ?? 0)) {
        events.push(event);
        const standing = standingOf(events);
        if (standing.state === shown && !STOPS.has(standing.state)) continue;
        shown = standing.state;
        if (standing.answer !== undefined) {
          bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: answerArtifact(taskId, standing.answer), append: false, lastChunk: true, metadata: undefined }));
        }
        const message = standing.text === undefined ? undefined : agentMessage(standing.text, { taskId, contextId, messageId: randomUUID() });
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: standing.state, message, timestamp: event.time }, metadata: { redflowSeq: event.seq } }));
        if (standing.state !== TaskState.TASK_STATE_INPUT_REQUIRED && STOPS.has(standing.state)) contexts.delete(taskId);
        if (STOPS.has(standing.state)) return;
      }
    } finally {
      following.delete(taskId);
    }
  };

  /** Tells the client its message was not an answer the wait takes; the task stays as it was. */
  const refuse = (taskId: string, contextId: string, why: string, bus: ExecutionEventBus): void => {
    const message = agentMessage(why, { taskId, contextId, messageId: randomUUID() });
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message, timestamp: new Date().toISOString() }, metadata: undefined }));
  };

  return {
    async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
      const { taskId, contextId } = request;
      contexts.set(taskId, contextId);
      if (request.task === undefined) {
        const { flowPath, flow } = await context.flows.runnable(context.flowId);
        await backend.start({ flowId: context.flowId, flowPath, flow: flow.definition, input: inputOf(request.userMessage), traceId: taskId });
        bus.publish(
          AgentEvent.task({
            id: taskId,
            contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
            artifacts: [],
            history: [request.userMessage],
            metadata: { redflowTraceId: taskId, flow: context.flowId },
          }),
        );
        return follow(taskId, contextId, [], bus);
      }
      // A message on a task: the answer to what its run waits for.
      const events = [...((await backend.events(taskId, 0)) ?? [])];
      const standing = standingOf(events);
      const answer = standing.wait === undefined ? undefined : answerOfMessage(standing.wait, request.userMessage);
      const refused = async (): Promise<string | undefined> => {
        if (standing.wait === undefined) return undefined;
        if (answer === undefined) return `That is not an answer to this: ${waitText(standing.wait)}`;
        try {
          await backend.answer(taskId, answer);
          return undefined;
        } catch (thrown) {
          // A refused answer (another came first, the deadline passed) leaves the task where its log says.
          if (!(thrown instanceof RedflowError)) throw thrown;
          return `${thrown.code}: ${thrown.message}`;
        }
      };
      const why = await refused();
      // The first event of a call is the task; an input-required one would end the call at once.
      const state = why === undefined && standing.wait !== undefined ? TaskState.TASK_STATE_WORKING : standing.state;
      bus.publish(AgentEvent.task({ ...request.task, status: { state, message: undefined, timestamp: new Date().toISOString() } }));
      if (why !== undefined) return refuse(taskId, contextId, why, bus);
      return follow(taskId, contextId, events, bus);
    },

    async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
      const answer = await backend.abort(taskId, 'canceled through A2A');
      // A run an execution here follows has its cancel published by that execution.
      if (following.has(taskId) || answer === 'unknown') return;
      // A parked run takes the abort as its wait's answer and ends; one already ended has its ending.
      const events = [...((await backend.events(taskId, 0)) ?? [])];
      for await (const event of backend.follow(taskId, events[events.length - 1]?.seq ?? 0)) events.push(event);
      const ending = standingOf(events);
      const contextId = contexts.get(taskId) ?? '';
      contexts.delete(taskId);
      const message = ending.text === undefined ? undefined : agentMessage(ending.text, { taskId, contextId, messageId: randomUUID() });
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: ending.state, message, timestamp: new Date().toISOString() }, metadata: undefined }));
    },
  };
}

