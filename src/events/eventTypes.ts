import type {
  AgentEvent as AgentEventRecord,
  HumanAnsweredData,
  HumanRequestedData,
  MemoryRequestedData,
  MemorySavedData,
  ModelAnsweredData,
  ModelRequestedData,
  OutputRejectedData,
  AnswerRejectedData,
  VerificationCompletedData,
  VerificationRequestedData,
  RunEndedData,
  RunResumedData,
  RunForkedData,
  RunStartedData,
  ToolApprovedData,
  ToolAttachedData,
  ToolCompletedData,
  ToolDeniedData,
  ToolRequestedData,
} from '../contracts/schema-types.js';
import type { ErrorInfo } from '../errors.js';

/**
 * The event types of a run's log, one per statechart transition. Defined once; the schema
 * (`agent-event.schema.json`) lists the same values and a test keeps the two equal.
 *
 * @example
 * ```ts
 * const run = startRun({ ...environment, input: 'hi', onEvent: (event) => {
 *   if (event.type === AgentEventType.ToolRequested) console.log('calls', event.data.tool);
 * } });
 * ```
 */
export const AgentEventType = {
  RunStarted: 'run.started',
  RunResumed: 'run.resumed',
  /**
   * The run is a fork of another (`forkRun`): always seq 2, right after its own `run.started`, so
   * every reader that begins at `run.started` reads a fork as it reads any run. The parent's events
   * up to the fork point follow it.
   */
  RunForked: 'run.forked',
  ModelRequested: 'model.requested',
  ModelAnswered: 'model.answered',
  ToolRequested: 'tool.requested',
  ToolCompleted: 'tool.completed',
  /** A person approved the call the run waited on (`requiresApproval`): it is made next. */
  ToolApproved: 'tool.approved',
  /** A person denied the call: it is never made, and the denial is the model's next observation. */
  ToolDenied: 'tool.denied',
  /**
   * The call in flight started work elsewhere that outlives this process (a remote A2A task) and
   * said how to find it again: a call re-sent after a crash re-attaches to it instead of starting it anew.
   */
  ToolAttached: 'tool.attached',
  /** The model asked a person (escalate, request_info): the run waits for the answer. */
  HumanRequested: 'human.requested',
  /** A person answered: the answer is the model's next observation. */
  HumanAnswered: 'human.answered',
  /** The final output failed the agent's outputSchema and goes back to the model once, with the errors. */
  OutputRejected: 'output.rejected',
  /** The answer broke the answer format and goes back to the model with its error (`onInvalidAnswer.repair`). */
  AnswerRejected: 'answer.rejected',
  /** A final answer goes to verification (the agent's `verification`) before the run ends. */
  VerificationRequested: 'verification.requested',
  /** The verifier answered: all four checks passed (the run ends done), or the failed ones are the model's next observation. */
  VerificationCompleted: 'verification.completed',
  /** The run's ending is decided; its turn is being added to the conversation's memory. */
  MemoryRequested: 'memory.requested',
  MemorySaved: 'memory.saved',
  RunCompleted: 'run.completed',
  RunFailed: 'run.failed',
} as const;

/** One of {@link AgentEventType}'s values. */
export type AgentEventType = (typeof AgentEventType)[keyof typeof AgentEventType];

/** The `data` of each event type. */
export interface AgentEventDataMap {
  'run.started': RunStartedData;
  'run.resumed': RunResumedData;
  'run.forked': RunForkedData;
  'model.requested': ModelRequestedData;
  'model.answered': ModelAnsweredData;
  'tool.requested': ToolRequestedData;
  'tool.completed': ToolCompletedData;
  'tool.approved': ToolApprovedData;
  'tool.denied': ToolDeniedData;
  'tool.attached': ToolAttachedData;
  'human.requested': HumanRequestedData;
  'human.answered': HumanAnsweredData;
  'output.rejected': OutputRejectedData;
  'answer.rejected': AnswerRejectedData;
  'verification.requested': VerificationRequestedData;
  'verification.completed': VerificationCompletedData;
  'memory.requested': MemoryRequestedData;
  'memory.saved': MemorySavedData;
  'run.completed': RunEndedData;
  'run.failed': RunEndedData;
}

/**
 * What the statechart records: the type, the iteration and the data. The recorder stamps it with
 * id, traceId, seq and time to make an {@link AgentEvent}.
 */
export type RecordedFact = {
  [T in AgentEventType]: { readonly type: T; readonly iteration: number; readonly data: AgentEventDataMap[T] };
}[AgentEventType];

/**
 * One record of the event log (`agent-event.schema.json`), typed by its `type`.
 *
 * @example
 * ```ts
 * const { events } = await store.read(traceId);
 * for (const event of events as AgentEvent[]) {
 *   if (event.type === 'model.answered') console.log(event.seq, event.data.usage?.totalTokens); // data narrowed by type
 * }
 * ```
 */
export type AgentEvent = {
  [T in AgentEventType]: Omit<AgentEventRecord, 'type' | 'data'> & {
    readonly type: T;
    readonly data: AgentEventDataMap[T];
  };
}[AgentEventType];

/** The events after which a run is over: nothing is appended after one of them. */
export const terminalEventTypes: ReadonlySet<AgentEventType> = new Set([
  AgentEventType.RunCompleted,
  AgentEventType.RunFailed,
]);

/** True when `event` ends its run. */
export function isTerminal(event: { readonly type: AgentEventType }): boolean {
  return terminalEventTypes.has(event.type);
}

/**
 * A tool's result as data, as `tool.completed` records it: a failure is an observation the model
 * sees next iteration. (Part of the machine's protocol, `machines/protocol.ts`; defined here, below
 * the machine, because a wait's answer carries one too.)
 *
 * @example
 * ```ts
 * const result: ToolResult = { ok: true, output: { status: 'shipped' } };
 * await answerWaitingRun({ ...environment, traceId, answer: { kind: 'client', result } }); // a client tool's result
 * ```
 */
export type ToolResult = { readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly error: ErrorInfo };
