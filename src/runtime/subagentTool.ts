import type { AgentRefConfig, RunOutcome, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ToolDefinition } from '../actors/tool.js';

/** A subagent's run timeout when its `agent.ref` node sets none: 5 minutes. */
export const DEFAULT_SUBAGENT_TIMEOUT_MS = 300_000;

/** What a subagent takes, whatever its flow: the task, which becomes its run's input. */
export const SUBAGENT_INPUT_SCHEMA: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  required: ['task'],
  additionalProperties: false,
  properties: { task: { type: 'string', minLength: 1, description: 'what the subagent must do, with everything it needs to know' } },
});

/** A subagent (`agent.ref` node) as its host needs it, its flow file found and checked. */
export interface SubagentDefinition {
  /** Its tool name: what the model calls, and the `agent_id` a delegation to it names. */
  readonly name: string;
  readonly nodeId: string;
  /** The flow file as the node names it. */
  readonly flow: string;
  /** The flow file's real path, inside the folders allowed for flow files. */
  readonly flowPath: string;
  /** The folders the subagent's own files may be in: those of the flow that names it. */
  readonly roots: readonly string[];
  /** Each of its runs' timeout. */
  readonly timeoutMs: number;
  readonly description: string;
}

/**
 * How a host runs subagents: it makes the tool that each call of a subagent goes to. Embedded, the
 * tool runs the subagent's flow in its process with a JSONL log beside the caller's; on a cluster,
 * it starts the run on the core workers that host the subagent's flow.
 */
export type SubagentHost = (subagent: SubagentDefinition) => ToolDefinition;

/** The spec of an `agent.ref` node: what the model is told, and `subagent` for the core. */
export function subagentToolSpec(name: string, config: AgentRefConfig): ToolSpec {
  return {
    name,
    description:
      config.description ??
      `Subagent "${name}": another agent, which does a task on its own and answers. Call it with {"task": …}, or delegate to it with agent_id "${name}".`,
    inputSchema: { ...SUBAGENT_INPUT_SCHEMA },
    subagent: { flow: config.flow, timeoutMs: config.timeoutMs ?? DEFAULT_SUBAGENT_TIMEOUT_MS },
  };
}

/** What a subagent's call answers: the outcome of its run, as the calling model reads it. */
export interface SubagentOutput {
  readonly status: Exclude<RunOutcome['status'], 'blocked'>;
  readonly reason: RunOutcome['reason'];
  readonly answer?: string;
  readonly output?: unknown;
  readonly question?: RunOutcome['question'];
  readonly handoff?: RunOutcome['handoff'];
}

/**
 * The call's result from its subagent run's outcome: done, done_partial, escalate and delegate
 * answer (the model reads the status and decides), blocked fails the call with SUBAGENT_FAILED.
 *
 * @throws RedflowError `SUBAGENT_FAILED` for a run that ended blocked, naming its error and trace id.
 */
export function subagentOutput(name: string, traceId: string, outcome: RunOutcome): SubagentOutput {
  if (outcome.status === 'blocked') {
    const why = outcome.error === undefined ? outcome.reason : `${outcome.error.code}: ${outcome.error.message}`;
    throw new RedflowError(
      errorInfo(ErrorCode.SUBAGENT_FAILED, `subagent "${name}" (run ${traceId}) ended blocked (${outcome.reason}): ${why}`, {
        hint: `redflow replay ${traceId} shows its run`,
      }),
    );
  }
  const output: { -readonly [K in keyof SubagentOutput]: SubagentOutput[K] } = { status: outcome.status, reason: outcome.reason };
  if (outcome.answer !== undefined) output.answer = outcome.answer;
  if (outcome.output !== undefined) output.output = outcome.output;
  if (outcome.question !== undefined) output.question = outcome.question;
  if (outcome.handoff !== undefined) output.handoff = outcome.handoff;
  return output;
}
