import { AgentExecutor, type ResumeAgentOptions } from '../agents/agentExecutor.js';
import { loadAgentDefinitionModule } from '../agents/definitionModule.js';
import type { JsonlFsyncMode } from '../events/jsonlEventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { WaitAnswer } from '../events/pendingWait.js';
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
  const executor = executorFor(options);
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

/** Options of {@link resumeAgentFile}. */
export interface AgentFileResumeOptions {
  /** The agent file the run's log says it ran (`run.started`'s `flow.path`). */
  readonly agentPath: string;
  readonly logPath: string;
  /** The answer to the wait the run is parked in, as the run host took it. */
  readonly answer: WaitAnswer;
  readonly signal: AbortSignal;
  readonly onEvent: (event: AgentEvent) => void;
  readonly env?: NodeJS.ProcessEnv;
  readonly fsync?: JsonlFsyncMode;
}

/**
 * Goes on with a parked run of an `.agent.md` agent (or any agent definition module) from its
 * log, with the answer to its wait: what `POST /api/runs/:traceId/approval`, `/answer` and
 * `/tool-results` do for such a run, as `resumeFromLog` does it for a flow's.
 *
 * @example
 * ```ts
 * const launched = await resumeAgentFile({ agentPath, logPath, answer: { kind: 'human', text: 'A-1001' }, signal, onEvent });
 * ```
 */
export async function resumeAgentFile(options: AgentFileResumeOptions): Promise<LaunchedRun> {
  const definition = await loadAgentDefinitionModule(options.agentPath);
  const executor = executorFor(options);
  // The host judged the answer against the log already; the executor judges it again under the log's lock.
  const run = await executor.resume(definition, { logPath: options.logPath, answer: options.answer as ResumeAgentOptions['answer'], signal: options.signal, onEvent: options.onEvent });
  return { handle: run.handle, finished: run.result };
}

/** The executor of a served agent file's run: the server's environment and fsync mode, when given. */
function executorFor(options: { readonly env?: NodeJS.ProcessEnv; readonly fsync?: JsonlFsyncMode }): AgentExecutor {
  return new AgentExecutor({ ...(options.env !== undefined && { env: options.env }), ...(options.fsync !== undefined && { fsync: options.fsync }) });
}
