import type {
  AgentEvent as AgentEventRecord,
  MemoryRequestedData,
  MemorySavedData,
  ModelAnsweredData,
  ModelRequestedData,
  RunEndedData,
  RunResumedData,
  RunStartedData,
  ToolCompletedData,
  ToolRequestedData,
} from '../contracts/schema-types.js';

/**
 * The event types of a run's log, one per statechart transition. Defined once; the schema
 * (`agent-event.schema.json`) lists the same values and a test keeps the two equal.
 */
export const AgentEventType = {
  RunStarted: 'run.started',
  RunResumed: 'run.resumed',
  ModelRequested: 'model.requested',
  ModelAnswered: 'model.answered',
  ToolRequested: 'tool.requested',
  ToolCompleted: 'tool.completed',
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
  'model.requested': ModelRequestedData;
  'model.answered': ModelAnsweredData;
  'tool.requested': ToolRequestedData;
  'tool.completed': ToolCompletedData;
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
