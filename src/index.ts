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
 * This entry holds what a user calls, and loads what an embedded run needs and nothing more: the
 * HTTP server and the editor's API are `redflow/server`, the Stately inspector `redflow/inspect`,
 * the PostgreSQL tool `redflow/postgres`, distributed mode (NATS) `redflow/nats`, Node-RED's nodes
 * `redflow/node-red`. Everything else is internal: the other entries import it by file, and
 * test/packaging holds this entry to its size.
 */

export { runFlowFile, resumeFromLog } from './host/embeddedFlowRun.js';
export { startRun } from './host/admission.js';
export { resumeRun } from './runtime/runAgent.js';
export type { StartRunOptions, ResumeRunOptions, RunHandle, RunResult, RunEnvironment } from './runtime/runAgent.js';
export { answerWaitingRun, settleRun } from './host/answerWaitingRun.js';
export type { AnswerWaitingRunOptions, RunSettlement } from './host/answerWaitingRun.js';
export type { GivenAnswer, RunWait } from './events/pendingWait.js';
export { RunWaitingError, isRunWaiting } from './runtime/runWaitingError.js';
export { serveActors } from './runtime/embeddedActors.js';
export { createInProcessTransport } from './actors/inProcessTransport.js';
export type { Transport } from './actors/transport.js';

// Agents defined in code.
export { defineAgent } from './agents/agentDefinition.js';
export type { AgentDefinition } from './agents/agentDefinition.js';
export { defineTool } from './agents/agentTool.js';
export type { AgentTool } from './agents/agentTool.js';
export { AgentExecutor } from './agents/agentExecutor.js';
export { mcpTools } from './agents/agentTool.js';
export type { McpToolsConfig } from './agents/agentTool.js';
export type { AgentExecutorOptions, ExecuteOptions, AgentResult, AgentRun } from './agents/agentExecutor.js';
export type { AgentActivityEvent } from './agents/activity.js';

// Models, tools and memory: the actors a run calls.
export { createOpenAiChatModel } from './actors/models/openAiChatModel.js';
export { createAnthropicMessagesModel } from './actors/models/anthropicMessagesModel.js';
export { createScriptedModel } from './actors/models/scriptedModel.js';
export type { ModelActor, ModelRequest, ModelAnswer, ModelChunk, ChatMessage } from './actors/model.js';
export { createHttpTool } from './actors/tools/httpTool.js';
export { loadModuleTool } from './actors/tools/moduleTool.js';
export type { ToolDefinition, ToolContext, ToolRequest, ToolResult } from './actors/tool.js';
export { createInProcessMemoryStore } from './actors/memory/inProcessMemoryStore.js';
export { createFileMemoryStore } from './actors/memory/fileMemoryStore.js';
export type { MemoryStore } from './actors/memory.js';

// The event log: its events, its fold, its stores.
export { AgentEventType } from './events/eventTypes.js';
// Named here: one member per event type, its `data` typed by it.
export type { AgentEvent } from './events/eventTypes.js';
export { fold, evolve } from './events/evolve.js';
export type { EventStore } from './events/eventStore.js';
export { createMemoryEventStore } from './events/memoryEventStore.js';
export { openJsonlEventStore } from './events/jsonlEventStore.js';
export { runSteps } from './machines/runSteps.js';

// The statechart.
export { reactMachine, ReactState } from './machines/reactMachine.js';
export { Outcome } from './machines/outcomes.js';

// Flows.
export { validateFlow, loadFlowFile } from './flows/index.js';
export type { FlowValidation } from './flows/index.js';

// The documents the schemas describe (schemas/*.schema.json; the types are generated from them).
import type * as Schema from './contracts/schema-types.js';
/**
 * An agent's ReAct settings, the `config` of a flow's `agent.core.react` node
 * (`schemas/agent-core-react-config.schema.json`).
 *
 * @example
 * ```ts
 * const agent: AgentCoreReactConfig = { strategy: 'react', maxIterations: 5, allowedTools: ['lookup_order'], requiresApproval: ['refund'] };
 * ```
 */
export type AgentCoreReactConfig = Schema.AgentCoreReactConfig;
/**
 * A run's state as the fold of its log rebuilds it (`schemas/agent-envelope.schema.json`).
 *
 * @example
 * ```ts
 * const envelope: AgentEnvelope = fold(events);
 * console.log(envelope.state.iteration, envelope.tools.history.length);
 * ```
 */
export type AgentEnvelope = Schema.AgentEnvelope;
/**
 * A flow document: its nodes and edges (`schemas/flow.schema.json`), what `redflow run` and the editor read.
 *
 * @example
 * ```ts
 * const flow: FlowDefinition = JSON.parse(await readFile('flow.json', 'utf8'));
 * const validation = validateFlow(flow);
 * ```
 */
export type FlowDefinition = Schema.FlowDefinition;
/**
 * How a run ended: `status` (`done`, `done_partial`, `escalate`, `delegate`, `blocked`), its
 * `reason`, and the answer, output, question or error that goes with it.
 *
 * @example
 * ```ts
 * const { outcome }: { outcome: RunOutcome } = await run.result;
 * if (outcome.status === 'blocked') console.error(outcome.reason, outcome.error?.code);
 * ```
 */
export type RunOutcome = Schema.RunOutcome;
/**
 * A tool as the model is told of it, and as `run.started` records it: name, description, input schema.
 *
 * @example
 * ```ts
 * const spec: ToolSpec = { name: 'lookup_order', description: 'Finds an order by id', inputSchema: { type: 'object' } };
 * ```
 */
export type ToolSpec = Schema.ToolSpec;
/**
 * The tokens a model call used, as its provider reported them (on `model.answered`, summed on the run).
 *
 * @example
 * ```ts
 * const usage: TokenUsage | undefined = event.type === 'model.answered' ? event.data.usage : undefined;
 * ```
 */
export type TokenUsage = Schema.TokenUsage;

// Errors, secrets, telemetry.
export { ErrorCode, RedflowError } from './errors.js';
export type { ErrorInfo } from './errors.js';
export { registerSecret, redactSecrets } from './secrets/secrets.js';
export { enableTelemetry, disableTelemetry, flushTelemetry } from './telemetry/enableTelemetry.js';
export type { TelemetryOptions } from './telemetry/enableTelemetry.js';

// Reproducible runs: an injected clock and ids.
export { createSteppingClock } from './runtime/clock.js';
export { createSequentialIds } from './runtime/ids.js';
