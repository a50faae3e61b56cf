/**
 * Redflow Agent Core: the public API. ReAct agents as flow graphs, run by an explicit XState v5
 * statechart whose every transition is appended to an event log.
 *
 * @example
 * ```ts
 * import { runFlowFile } from 'redflow';
 * const run = await runFlowFile({ flowPath: 'flow.json', input: 'Where is order A-1001?' });
 * const { outcome } = await run.finished();
 * ```
 *
 * This entry point loads what an embedded run needs and nothing more: the HTTP server and the
 * editor's API are `redflow/server`, the Stately inspector `redflow/inspect`, the PostgreSQL tool
 * `redflow/postgres`, and distributed mode (NATS) `redflow/nats`. test/packaging holds it to that.
 */
export * from './contracts/schema-types.js';
export { validators, compileUserSchema, SchemaFile, loadSchema } from './contracts/schemas.js';
export type { InputValidator } from './contracts/schemas.js';
export { ErrorCode, RedflowError, errorInfo, toErrorInfo } from './errors.js';
export type { ErrorInfo } from './errors.js';
export { REDACTED, registerSecret, registerEnvironmentSecrets, redactSecrets, redactSecretsInData, createSecretRegistry } from './secrets.js';
export type { SecretRegistry } from './secrets.js';
export { holdSecret } from './secrets.js';
export { withSecretScope, withScopedSecret, addScopedSecret } from './secretScope.js';

export { reactMachine, ReactState } from './machines/reactMachine.js';
export type { ReactMachineInput, ResumePoint, ResumeAt, ReactEvent, TransportCommand } from './machines/reactTypes.js';
export { Outcome } from './machines/outcomes.js';
export { buildSystemPrompt, buildMessages, REACT_PROMPT_TEMPLATE } from './machines/prompt.js';
export { StopCondition } from './events/stopConditions.js';
export { validateModelAnswer, defaultAnswerLimits } from './validation/validateModelAnswer.js';
export type { AnswerRules, AnswerLimits, AnswerValidation } from './validation/validateModelAnswer.js';

export { AgentEventType, isTerminal } from './events/eventTypes.js';
// Named here, this `AgentEvent` (one member per event type, its `data` typed by it) wins over the
// schema's loose record of the same name that `export *` above would give.
export type { AgentEvent, AgentEventDataMap, RecordedFact } from './events/eventTypes.js';
/** @deprecated The same as {@link AgentEvent}, which is now the precise type. */
export type { AgentEvent as TypedAgentEvent } from './events/eventTypes.js';
/** One record of the event log as its schema (`agent-event.schema.json`) has it: `data` untyped. */
export type { AgentEvent as AgentEventRecord } from './contracts/schema-types.js';
export { evolve, fold, emptyEnvelope } from './events/evolve.js';
export { logStatus } from './events/resumePoint.js';
export { pendingWait, judgeAnswer, waitOfEvent } from './events/pendingWait.js';
export type { RunWait, WaitAnswer, GivenAnswer, CallAnswer, AnswerTarget, AnswerJudgement } from './events/pendingWait.js';
export type { EventStore, ReadResult, LogProblem, FollowOptions } from './events/eventStore.js';
export { createMemoryEventStore } from './events/memoryEventStore.js';
export { openJsonlEventStore, readJsonlLog, repairTornTail } from './events/jsonlEventStore.js';
export { followJsonlLog } from './events/jsonlFollow.js';
export type { JsonlFollowOptions } from './events/jsonlFollow.js';

export type { Transport, Reply, Subscription, TransportMessage, RequestHandler } from './actors/transport.js';
export { Header } from './actors/transport.js';
export { Subject, DEFAULT_SUBJECT_PREFIX } from './actors/subjects.js';
export { createInProcessTransport } from './actors/inProcessTransport.js';
export type { ModelActor, ModelRequest, ModelAnswer, ChatMessage } from './actors/model.js';
export type { ModelCallOptions } from './actors/model.js';
export { withApiKey } from './actors/model.js';
export type { ToolDefinition, ToolContext, ToolRequest, ToolResult } from './actors/tool.js';
export type { MemoryStore, MemoryRecord } from './actors/memory.js';
export { serveModel, serveTool, serveMemory } from './actors/serveActors.js';
export { createScriptedModel } from './actors/models/scriptedModel.js';
export { createOpenAiChatModel, resolveOpenAiConfig, needsApiKey } from './actors/models/openAiChatModel.js';
export { createAnthropicMessagesModel, resolveAnthropicConfig } from './actors/models/anthropicMessagesModel.js';
export { createNodeModel, resolveModelConfig } from './actors/models/nodeModel.js';
export { ModelProvider } from './actors/models/modelProviders.js';
export { createHttpTool } from './actors/tools/httpTool.js';
export { loadModuleTool } from './actors/tools/moduleTool.js';
export { createInProcessMemoryStore } from './actors/memory/inProcessMemoryStore.js';
export { createFileMemoryStore } from './actors/memory/fileMemoryStore.js';

export { validateFlow, loadFlowFile, parseFlowText, formatDiagnostics, checkConnection, NodeType, EdgeKind } from './flows/index.js';
export type { FlowValidation, ResolvedFlow, FlowDiagnostic, LoadedFlow } from './flows/index.js';

export { startRun, resumeRun } from './runtime/runAgent.js';
export { answerWaitingRun, settleRun } from './runtime/answerWaitingRun.js';
export type { AnswerWaitingRunOptions, RunSettlement } from './runtime/answerWaitingRun.js';
export { RunWaitingError, isRunWaiting } from './runtime/runWaitingError.js';
export { DEFAULT_WAIT_TIMEOUT_MS } from './events/waits.js';
export type { StartRunOptions, ResumeRunOptions, RunHandle, RunResult, RunEnvironment } from './runtime/runAgent.js';
export { serveActors } from './runtime/embeddedActors.js';
export { buildFlowActors } from './runtime/flowActors.js';
export { planRun } from './runtime/runPlan.js';
export { enableTelemetry, disableTelemetry, flushTelemetry } from './telemetry/enableTelemetry.js';
export type { TelemetryOptions, TracerProviderLike, MeterProviderLike } from './telemetry/enableTelemetry.js';
export { otelTraceIdOf } from './telemetry/traceContext.js';
export type { RunPlan, PlannedTool } from './runtime/runPlan.js';
export { buildModel } from './runtime/buildModel.js';
export { buildTools, allowedToolSpecs } from './runtime/buildTools.js';
export { buildMemoryStore } from './runtime/buildMemoryStore.js';
export { runFlowFile, resumeFromLog } from './runtime/embeddedFlowRun.js';
export { loadValidFlow, FlowInvalidError } from './flows/loadValidFlow.js';
/** The `ENV_NOT_SET` warnings of a valid flow in the environment its runs would see. */
export { environmentWarnings } from './flows/environmentWarnings.js';
export { systemClock, createSteppingClock } from './runtime/clock.js';
export type { Clock } from './runtime/clock.js';
export { randomIds, createSequentialIds } from './runtime/ids.js';
export type { IdSource } from './runtime/ids.js';

export { runSteps, stateAfter } from './machines/runSteps.js';
export type { RunStep } from './machines/runSteps.js';

export type { AgentDefinition, PromptConfig, ModelConfig, RunConfig, ToolConfig, InputConfig, InputSpec, OutputConfig } from './agents/agentDefinition.js';
export { checkAgentDefinition, checkAgentInputs, defineAgent } from './agents/agentDefinition.js';
export { defineTool } from './agents/agentTool.js';
export type { AgentTool, ClientTool, DefinitionTool } from './agents/agentTool.js';
export { withJsonSchema, jsonSchemaOf } from './agents/schemaToJson.js';
export type { JsonSchemaOf } from './agents/schemaToJson.js';
export { checkAgainst, isStandardSchema } from './agents/schemaCheck.js';
export type { AgentSchema, JsonSchema, SchemaInput, SchemaOutput, SchemaVerdict } from './agents/schemaCheck.js';
export { renderTemplate, templateVariables } from './agents/template.js';
export { AgentRegistry, agentRegistry } from './agents/agentRegistry.js';
export { AgentExecutor } from './agents/agentExecutor.js';
export { loadAgentDefinitionModule, isDefinitionModulePath } from './agents/definitionModule.js';
export type { AgentExecutorOptions, ExecuteOptions, ResumeAgentOptions, AgentResult, AgentRun } from './agents/agentExecutor.js';
export { createActivityDeriver, activityOfLog, activityAsData } from './agents/activity.js';
export type { AgentActivityEvent, AgentActivityData, AgentActivityType, ActivityToolCall, ActivityDeriver } from './agents/activity.js';
export { terminateReasonOf } from './agents/terminateReason.js';
export type { TerminateReason } from './agents/terminateReason.js';
export type { ModelChunk } from './actors/model.js';
export type { RunChunk } from './actors/serveActors.js';
