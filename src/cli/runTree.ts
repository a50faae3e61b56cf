import type { ParentCall, RunOutcome } from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { logStatus } from '../events/resumePoint.js';
import { MAX_SUBAGENT_DEPTH } from '../machines/subagents.js';
import { styles } from './output.js';

/** A run and the subagent runs its calls started, each with theirs: what `redflow replay --tree` shows. */
export interface RunTreeNode {
  readonly traceId: string;
  /** How many events its log holds. */
  readonly events: number;
  /** Its outcome; null while it is unfinished (or its log is damaged before its end). */
  readonly outcome: RunOutcome | null;
  /** The call that started it, for a subagent run. */
  readonly parent: ParentCall | null;
  /** Its calls of subagents, in order. */
  readonly calls: readonly SubagentCallNode[];
  /** The run it is a fork of and the iteration it went live from, for a fork (`run.forked`). */
  readonly forkedFrom: { readonly traceId: string; readonly atIteration: number } | null;
  /** The runs forked from it that were found, in fork-point order. */
  readonly forks: readonly RunTreeNode[];
}

/** The logs of the runs forked from a run (their `run.forked` names it), as found; none when not looked for. */
export type ForkReader = (traceId: string) => Promise<readonly (readonly AgentEvent[])[]>;

/** One call of a subagent, and the run it started (null when that run's log is not found or cannot be read). */
export interface SubagentCallNode {
  readonly iteration: number;
  readonly tool: string;
  readonly childTraceId: string;
  readonly run: RunTreeNode | null;
  /** Why the run's log could not be read (a refused permission, a store that is down), when it could not. */
  readonly unreadable?: string;
}

/**
 * Reads a run's log: `tools` are the subagents' names from the root run down to it (empty for the
 * root), which is how a cluster finds a subagent's prefix. Undefined when there is no such log;
 * throws when the log may exist but cannot be read (the tree then says why, not "no log").
 */
export type RunLogReader = (traceId: string, tools: readonly string[]) => Promise<readonly AgentEvent[] | undefined>;

/**
 * The tree of a run and its subagent runs, read with `read` from the root's events down: each
 * `tool.requested` with a `childTraceId` is a call of a subagent, whose run is read in turn. Never
 * deeper than subagents may nest.
 *
 * @example
 * ```ts
 * const tree = await runTree(events, (traceId) => readJsonlLog(`${dir}/${traceId}.jsonl`).then((r) => r.events, () => undefined));
 * ```
 */
export async function runTree(events: readonly AgentEvent[], read: RunLogReader, tools: readonly string[] = [], forksOf?: ForkReader): Promise<RunTreeNode> {
  const first = events[0];
  const second = events[1];
  const calls: SubagentCallNode[] = [];
  for (const event of events) {
    if (event.type !== AgentEventType.ToolRequested || event.data.childTraceId === undefined) continue;
    const { childTraceId, tool } = event.data;
    const below = [...tools, tool];
    let logged: readonly AgentEvent[] | undefined;
    try {
      logged = below.length > MAX_SUBAGENT_DEPTH ? undefined : await read(childTraceId, below);
    } catch (error) {
      calls.push({ iteration: event.iteration, tool, childTraceId, run: null, unreadable: error instanceof Error ? error.message : String(error) });
      continue;
    }
    calls.push({ iteration: event.iteration, tool, childTraceId, run: logged === undefined || logged.length === 0 ? null : await runTree(logged, read, below, forksOf) });
  }
  const status = events.length > 0 ? logStatus(events) : undefined;
  const forks: RunTreeNode[] = [];
  for (const forked of first === undefined || forksOf === undefined ? [] : await forksOf(first.traceId)) forks.push(await runTree(forked, read, [], forksOf));
  forks.sort((a, b) => (a.forkedFrom?.atIteration ?? 0) - (b.forkedFrom?.atIteration ?? 0));
  return {
    traceId: first?.traceId ?? '',
    events: events.length,
    outcome: status?.kind === 'finished' ? status.outcome : null,
    parent: first?.type === AgentEventType.RunStarted ? (first.data.parent ?? null) : null,
    calls,
    forkedFrom: second?.type === AgentEventType.RunForked ? { traceId: second.data.parent.traceId, atIteration: second.data.atIteration } : null,
    forks,
  };
}

/**
 * The tree as lines: the run, then under it each call of a subagent (`#<iteration> <tool>`) with
 * the run it started, and each run forked from it (`fork at #<iteration>`), indented by depth.
 *
 * @example
 * ```ts
 * formatRunTree(tree, false) // ['run p  done (final_answer)  12 events', '└─ #1 counter → run p-1  done (final_answer)  12 events', …]
 * ```
 */
export function formatRunTree(tree: RunTreeNode, color: boolean): string[] {
  const s = styles(color);
  const describe = (run: RunTreeNode) =>
    `run ${s.bold(run.traceId)}  ${run.outcome === null ? s.yellow('unfinished') : `${run.outcome.status} (${run.outcome.reason})`}  ${run.events} events`;
  const lines = [describe(tree)];
  const walk = (run: RunTreeNode, indent: string) => {
    const below = run.calls.length + run.forks.length;
    run.calls.forEach((call, index) => {
      const last = index === below - 1;
      const head = `${indent}${last ? '└─' : '├─'} #${call.iteration} ${s.cyan(call.tool)} → `;
      const missing = call.unreadable === undefined ? 'no log found' : `cannot read its log: ${call.unreadable}`;
      lines.push(call.run === null ? `${head}run ${call.childTraceId}  ${s.yellow(missing)}` : `${head}${describe(call.run)}`);
      if (call.run !== null) walk(call.run, `${indent}${last ? '   ' : '│  '}`);
    });
    run.forks.forEach((fork, index) => {
      const last = run.calls.length + index === below - 1;
      lines.push(`${indent}${last ? '└─' : '├─'} ${s.cyan(`fork at #${fork.forkedFrom?.atIteration ?? '?'}`)} → ${describe(fork)}`);
      walk(fork, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  walk(tree, '');
  return lines;
}
