import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ParentCall } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { logStatus } from '../events/resumePoint.js';
import { childTraceIdOf } from '../machines/subagents.js';
import type { ToolContext, ToolDefinition } from '../actors/tool.js';
import { isValidTraceId } from './ids.js';
import { readResumableLog } from './resumableLog.js';
import type { RunResult } from './runSession.js';
import { isRunWaiting } from './runWaitingError.js';
import { SUBAGENT_INPUT_SCHEMA, subagentOutput, type SubagentDefinition, type SubagentHost } from './subagentTool.js';

/** A subagent's run in this process, under way: what `runFlowFile` and `resumeFromLog` give back. */
interface ChildRun {
  finished(): Promise<RunResult>;
}

/** What the host passes to start a subagent's run (the subset of `runFlowFile`'s options it uses). */
export interface ChildRunOptions {
  readonly flowPath: string;
  readonly input: string;
  readonly traceId: string;
  readonly logPath: string;
  readonly parent: ParentCall;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly allowFiles: readonly string[];
}

/** What the host passes to continue a subagent's run from its log (the subset of `resumeFromLog`'s options it uses). */
export interface ChildResumeOptions {
  readonly logPath: string;
  readonly flowPath: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly allowFiles: readonly string[];
  /** Given to end a wait the run parked in: a subagent runs unattended. */
  readonly answer?: { readonly kind: 'expire' };
}

/** Options of {@link embeddedSubagents}. */
export interface EmbeddedSubagentOptions {
  /** Where the subagents' logs go: the folder of the calling run's log. */
  readonly runsDir: string;
  /** Starts a subagent's run in this process (`runFlowFile`, with the caller's environment). */
  readonly run: (options: ChildRunOptions) => Promise<ChildRun>;
  /** Continues one from its log (`resumeFromLog`, with the caller's environment). */
  readonly resume: (options: ChildResumeOptions) => Promise<ChildRun>;
}

/**
 * Runs subagents in this process (embedded mode): a call of a subagent is a run of its flow, with
 * the task as its input and a JSONL log of its own in the caller's runs folder, named by the call
 * (`<traceId>-<iteration>`, see `childTraceIdOf`) and linked to it (`parent` in its
 * `run.started`). A call sent again after a crash finds that log: a finished run answers with its
 * logged outcome, an unfinished one is continued from its log (`resumeFromLog`), so each call
 * runs its subagent once. The call's signal aborts the run (the caller was aborted, timed out or
 * gave up), and the run's timeout is the subagent's. A subagent runs unattended: a wait in its
 * run (an approval, a client tool, a question to a person) ends at once, as if its deadline had
 * passed, and its outcome (for a question, `escalate` with it) is the call's answer.
 *
 * @example
 * ```ts
 * const subagents = embeddedSubagents({ runsDir: '.redflow/runs', run: (o) => runFlowFile(o), resume: (o) => resumeFromLog(o) });
 * const { tools } = await buildTools(plan, { subagents });
 * ```
 */
export function embeddedSubagents(options: EmbeddedSubagentOptions): SubagentHost {
  return (subagent) => ({
    name: subagent.name,
    description: subagent.description,
    inputSchema: { ...SUBAGENT_INPUT_SCHEMA },
    async execute(input: Record<string, unknown>, context: ToolContext) {
      const traceId = childTraceOf(subagent, context);
      const logPath = path.join(options.runsDir, `${traceId}.jsonl`);
      const result = await runOnce(options, subagent, input, context, traceId, logPath);
      return subagentOutput(subagent.name, traceId, result.outcome);
    },
  }) satisfies ToolDefinition;
}

/** The child run's trace id, or why the call cannot have one (the caller's id is too long). */
function childTraceOf(subagent: SubagentDefinition, context: ToolContext): string {
  const traceId = childTraceIdOf(context.traceId, context.iteration);
  if (isValidTraceId(traceId)) return traceId;
  throw new RedflowError(
    errorInfo(ErrorCode.SUBAGENT_TRACE_TAKEN, `subagent "${subagent.name}" cannot be named after run ${context.traceId.slice(0, 40)}…: its trace id would pass 128 characters`, {
      hint: 'start the calling run with a shorter trace id',
    }),
  );
}

/** The subagent's run for this call: started, continued from its log, or read from it. */
async function runOnce(
  options: EmbeddedSubagentOptions,
  subagent: SubagentDefinition,
  input: Record<string, unknown>,
  context: ToolContext,
  traceId: string,
  logPath: string,
): Promise<RunResult> {
  const parent: ParentCall = {
    traceId: context.traceId,
    iteration: context.iteration,
    idempotencyKey: context.idempotencyKey,
    tool: subagent.name,
    // Logged with the link: every stretch of the subagent's run joins the caller's trace below this call.
    ...(context.traceparent !== undefined && { traceparent: context.traceparent }),
  };
  const common = { flowPath: subagent.flowPath, timeoutMs: subagent.timeoutMs, signal: context.signal, allowFiles: subagent.roots };
  const events = await loggedEvents(logPath);
  if (events.length === 0) {
    return settled(options, common, logPath, await options.run({ ...common, input: String(input.task), traceId, logPath, parent }));
  }
  // The call was made before (the caller crashed, and sends it again): that run is this call's.
  const status = logStatus(events);
  const logged = status.started.parent;
  if (logged?.traceId !== parent.traceId || logged.idempotencyKey !== parent.idempotencyKey) {
    throw new RedflowError(
      errorInfo(ErrorCode.SUBAGENT_TRACE_TAKEN, `subagent "${subagent.name}": ${path.basename(logPath)} holds a run that this call did not start`, {
        hint: 'move that log out of the runs folder, or start the calling run with another trace id',
      }),
    );
  }
  if (status.kind === 'finished') return { traceId, outcome: status.outcome, envelope: status.envelope, lastSeq: events.length };
  return settled(options, common, logPath, await options.resume({ ...common, logPath }));
}

/** The run's result; a run that parks in a wait is resumed with its wait expired (a subagent cannot wait). */
async function settled(
  options: EmbeddedSubagentOptions,
  common: Omit<ChildResumeOptions, 'logPath' | 'answer'>,
  logPath: string,
  run: ChildRun,
): Promise<RunResult> {
  try {
    return await run.finished();
  } catch (error) {
    if (!isRunWaiting(error)) throw error;
    return settled(options, common, logPath, await options.resume({ ...common, logPath, answer: { kind: 'expire' } }));
  }
}

/** The events of the subagent's log (a torn last record cut off), none when it has no log yet. */
async function loggedEvents(logPath: string): Promise<readonly AgentEvent[]> {
  const exists = await stat(logPath).then(
    () => true,
    () => false,
  );
  return exists ? (await readResumableLog(logPath)).events : [];
}
