import { AgentExecutor } from '../agents/agentExecutor.js';
import { loadAgentDefinitionModule } from '../agents/definitionModule.js';
import type { JsonlFsyncMode } from '../events/jsonlEventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { LaunchedRun } from '../host/liveRuns.js';
import type { BackendAgentStartRequest } from './runBackend.js';

/** Options of {@link runAgentFile}. */
export interface AgentFileRunOptions extends BackendAgentStartRequest {
  readonly traceId: string;
  readonly logPath: string;
  readonly signal: AbortSignal;
  readonly onEvent: (event: AgentEvent) => void;
  readonly env?: NodeJS.ProcessEnv;
  readonly fsync?: JsonlFsyncMode;
}

/**
 * Starts a run of an `.agent.md` agent of the flows directory in this process, logged at
 * `logPath`, as `redflow run <file>.agent.md` runs it: the served run of `POST /api/runs`.
 *
 * @example
 * ```ts
 * const launched = await runAgentFile({ agentId: 'reviewer.agent.md', agentPath, inputs: {}, traceId, logPath, signal, onEvent });
 * ```
 */
export async function runAgentFile(options: AgentFileRunOptions): Promise<LaunchedRun> {
  const definition = await loadAgentDefinitionModule(options.agentPath);
  const executor = new AgentExecutor({ ...(options.env !== undefined && { env: options.env }), ...(options.fsync !== undefined && { fsync: options.fsync }) });
  const run = await executor.start(definition, {
    inputs: options.inputs,
    modulePath: options.agentPath,
    traceId: options.traceId,
    logPath: options.logPath,
    signal: options.signal,
    onEvent: options.onEvent,
  });
  return { handle: run.handle, finished: run.result };
}
