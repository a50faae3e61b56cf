/**
 * The names Redflow's spans and metrics use, defined once. The `gen_ai.*` ones are the
 * OpenTelemetry GenAI semantic conventions' (a test checks each against
 * `@opentelemetry/semantic-conventions`); `redflow.*` ones are Redflow's own.
 */
export const TelemetryAttribute = {
  OperationName: 'gen_ai.operation.name',
  ProviderName: 'gen_ai.provider.name',
  AgentName: 'gen_ai.agent.name',
  ConversationId: 'gen_ai.conversation.id',
  RequestModel: 'gen_ai.request.model',
  ResponseFinishReasons: 'gen_ai.response.finish_reasons',
  UsageInputTokens: 'gen_ai.usage.input_tokens',
  UsageOutputTokens: 'gen_ai.usage.output_tokens',
  TokenType: 'gen_ai.token.type',
  ToolName: 'gen_ai.tool.name',
  ToolType: 'gen_ai.tool.type',
  ToolDescription: 'gen_ai.tool.description',
  ToolCallId: 'gen_ai.tool.call.id',
  /** Content, recorded only when the operator opts in (`captureContent`). */
  ToolCallArguments: 'gen_ai.tool.call.arguments',
  /** Content, recorded only when the operator opts in (`captureContent`). */
  ToolCallResult: 'gen_ai.tool.call.result',
  /** Content, recorded only when the operator opts in (`captureContent`). */
  InputMessages: 'gen_ai.input.messages',
  /** Content, recorded only when the operator opts in (`captureContent`). */
  OutputMessages: 'gen_ai.output.messages',
  ErrorType: 'error.type',
  /** The run's own trace id (its log's name), which the OpenTelemetry trace id is derived from. */
  RedflowTraceId: 'redflow.trace_id',
  /** On a subagent's run span: the trace id of the run whose call started it. */
  RedflowParentTraceId: 'redflow.parent.trace_id',
  RedflowIteration: 'redflow.iteration',
  RedflowSeq: 'redflow.seq',
  /** True on the span of a run's stretch that continues it from its log (a resume, a takeover, an answer). */
  RedflowResumed: 'redflow.resumed',
  /** A budgeted run's model cost in US dollars (agent `budget`, by its price table), on the run span and each model.answered event. */
  RedflowUsageCostUsd: 'redflow.usage.cost_usd',
  /** True when a budgeted run's token counts include the tokenizer's estimate (a provider reported none). */
  RedflowUsageEstimated: 'redflow.usage.estimated',
  RedflowOutcomeStatus: 'redflow.outcome.status',
  RedflowOutcomeReason: 'redflow.outcome.reason',
  /** How a stretch left a run that did not end in it: `waiting` (parked in a wait), `stopped`. */
  RedflowLeft: 'redflow.left',
  RedflowAttempts: 'redflow.model.attempts',
  RedflowToolOk: 'redflow.tool.ok',
  /** On a `chat` span: `verification` when the call verifies a final answer (the `verifying` state). */
  RedflowModelPurpose: 'redflow.model.purpose',
  /** On a `verification.completed` span event: whether all four checks passed. */
  RedflowVerificationPassed: 'redflow.verification.passed',
  /** The kind of actor a metric counts calls of: `model`, `tool`. */
  RedflowActor: 'redflow.actor',
} as const;

/** The `gen_ai.operation.name` of each span kind Redflow makes. */
export const GenAiOperation = {
  InvokeAgent: 'invoke_agent',
  Chat: 'chat',
  ExecuteTool: 'execute_tool',
} as const;

/** The metrics Redflow records. */
export const TelemetryMetric = {
  /** Counter: runs started (`run.started`). */
  RunsStarted: 'redflow.runs.started',
  /** Counter: stretches of runs continued from their log (`run.resumed`). */
  RunsResumed: 'redflow.runs.resumed',
  /** Counter: runs ended, by `redflow.outcome.status` and `redflow.outcome.reason`. */
  RunsEnded: 'redflow.runs.ended',
  /** UpDownCounter: runs this process is working on now. */
  RunsActive: 'redflow.runs.active',
  /** Counter: iterations begun (`model.requested`). */
  Iterations: 'redflow.iterations',
  /** Histogram (s): from a run's start to its ending. */
  RunDuration: 'redflow.run.duration',
  /** Histogram ({token}): tokens per model call, by `gen_ai.token.type`. */
  TokenUsage: 'gen_ai.client.token.usage',
  /** Histogram (s): model calls. */
  OperationDuration: 'gen_ai.client.operation.duration',
  /** Histogram (s): tool calls, by `gen_ai.tool.name`. */
  ToolDuration: 'redflow.tool.duration',
  /** Gauge: model and tool calls this process is serving now (a worker's queue depth). */
  ActorInFlight: 'redflow.actor.in_flight',
} as const;

/** The instrumentation scope of every span and metric. */
export const INSTRUMENTATION_NAME = 'redflow';
