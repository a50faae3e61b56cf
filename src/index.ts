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
 */
export * from './contracts/schema-types.js';
export { validators, compileUserSchema, SchemaFile, loadSchema } from './contracts/schemas.js';
export type { InputValidator } from './contracts/schemas.js';
export { ErrorCode, RedflowError, errorInfo, toErrorInfo } from './errors.js';
export type { ErrorInfo } from './errors.js';
export { REDACTED, registerSecret, registerEnvironmentSecrets, redactSecrets, redactSecretsInData, createSecretRegistry } from './secrets.js';
export type { SecretRegistry } from './secrets.js';

export { reactMachine, ReactState } from './machines/reactMachine.js';
export type { ReactMachineInput, ResumePoint, ResumeAt, ReactEvent, TransportCommand } from './machines/reactTypes.js';
export { Outcome } from './machines/outcomes.js';
export { buildSystemPrompt, buildMessages, REACT_PROMPT_TEMPLATE } from './machines/prompt.js';
export { StopCondition } from './machines/stopConditions.js';
export { validateModelAnswer, defaultAnswerLimits } from './validation/validateModelAnswer.js';
export type { AnswerRules, AnswerLimits, AnswerValidation } from './validation/validateModelAnswer.js';

export { AgentEventType, isTerminal } from './events/eventTypes.js';
export type { AgentEvent as TypedAgentEvent, RecordedFact } from './events/eventTypes.js';
export { evolve, fold, emptyEnvelope } from './events/evolve.js';
export { logStatus } from './events/resumePoint.js';
export type { EventStore, ReadResult, LogProblem } from './events/eventStore.js';
export { createMemoryEventStore } from './events/memoryEventStore.js';
export { openJsonlEventStore, readJsonlLog, repairTornTail } from './events/jsonlEventStore.js';

export type { Transport, Reply, Subscription, TransportMessage, RequestHandler } from './actors/transport.js';
export { Header } from './actors/transport.js';
export { Subject, DEFAULT_SUBJECT_PREFIX } from './actors/subjects.js';
export { createInProcessTransport } from './actors/inProcessTransport.js';
export type { ModelActor, ModelRequest, ModelAnswer, ChatMessage } from './actors/model.js';
export type { ToolDefinition, ToolContext, ToolRequest, ToolResult } from './actors/tool.js';
export type { MemoryStore, MemoryRecord } from './actors/memory.js';
export { serveModel, serveTool, serveMemory } from './actors/serveActors.js';
export { createScriptedModel } from './actors/models/scriptedModel.js';
export { createOpenAiChatModel, resolveOpenAiConfig, needsApiKey } from './actors/models/openAiChatModel.js';
export { createHttpTool } from './actors/tools/httpTool.js';
export { loadModuleTool } from './actors/tools/moduleTool.js';
export { createPostgresTool } from './actors/tools/postgresTool.js';
export type { PostgresTool, PostgresToolOptions, PostgresToolOutput } from './actors/tools/postgresTool.js';
export { parseSqlParameters } from './actors/tools/sqlParameters.js';
export type { ParsedSql, SqlParseResult } from './actors/tools/sqlParameters.js';
export { createInProcessMemoryStore } from './actors/memory/inProcessMemoryStore.js';
export { createFileMemoryStore } from './actors/memory/fileMemoryStore.js';

export { validateFlow, loadFlowFile, parseFlowText, formatDiagnostics, checkConnection, NodeType, EdgeKind } from './flows/index.js';
export type { FlowValidation, ResolvedFlow, FlowDiagnostic, LoadedFlow } from './flows/index.js';

export { startRun, resumeRun } from './runtime/runAgent.js';
export type { StartRunOptions, ResumeRunOptions, RunHandle, RunResult, RunEnvironment } from './runtime/runAgent.js';
export { serveActors } from './runtime/embeddedActors.js';
export { buildFlowActors } from './runtime/flowActors.js';
export { planRun } from './runtime/runPlan.js';
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

export { createRedflowServer, DEFAULT_PORT, DEFAULT_HOST, DEFAULT_FLOWS_DIR } from './server/server.js';
export type { RedflowServer, RedflowServerOptions } from './server/server.js';
export { createEmbeddedRunBackend } from './server/embeddedRunBackend.js';
export type { EmbeddedRunBackendOptions } from './server/embeddedRunBackend.js';
export type { RunBackend, BackendStartRequest, AbortAnswer, InspectorFactory } from './server/runBackend.js';
export { ApiRoute, StreamEvent } from './server/apiTypes.js';
export { openInspectSession, startInspectorRelay, replayMessages, DEFAULT_RELAY_PORT } from './inspect/index.js';
export type { InspectSession, InspectSessionOptions, ReplaySummary, InspectorRelay } from './inspect/index.js';
export { runSteps, stateAfter } from './events/runSteps.js';
export type { RunStep } from './events/runSteps.js';
export type * from './server/apiTypes.js';
