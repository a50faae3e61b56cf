import path from 'node:path';
import type { ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ToolDefinition } from '../actors/tool.js';
import type { RunResult } from '../runtime/runSession.js';
import { MAX_SUBAGENT_DEPTH } from '../machines/subagents.js';
import { embeddedSubagents, type ChildResumeOptions, type ChildRunOptions } from '../runtime/embeddedSubagents.js';
import { DEFAULT_SUBAGENT_TIMEOUT_MS, subagentToolSpec, type SubagentDefinition } from '../runtime/subagentTool.js';
import type { AgentDefinition } from './agentDefinition.js';
import type { AgentRun, ExecuteOptions, ResumeAgentOptions } from './agentExecutorTypes.js';
import { loadAgentDefinitionModule } from './definitionModule.js';
import { definitionSource } from './definitionSources.js';

export { definitionSource } from './definitionSources.js';

/** A definition's subagents as its run needs them: their specs (the log's) and the tools serving them. */
export interface DefinitionSubagents {
  readonly specs: readonly ToolSpec[];
  readonly tools: readonly ToolDefinition[];
}

/** How a subagent's run is started and continued: by an `AgentExecutor`, which passes these in. */
export interface SubagentRunner {
  run(definition: AgentDefinition, options: ChildRunOptions): Promise<{ finished(): Promise<RunResult> }>;
  resume(definition: AgentDefinition, options: ChildResumeOptions): Promise<{ finished(): Promise<RunResult> }>;
}

/** Each subagent of `definition` as a definition: one given by path is loaded (relative to `baseDir`). */
export async function resolveSubagents(definition: AgentDefinition, baseDir: string): Promise<AgentDefinition[]> {
  const resolved: AgentDefinition[] = [];
  for (const entry of definition.subagents ?? []) {
    resolved.push(typeof entry === 'string' ? await loadAgentDefinitionModule(path.resolve(baseDir, entry)) : (entry as AgentDefinition));
  }
  return resolved;
}

/**
 * Refuses a tree of subagents that would never end or is too deep, with the codes of a flow's
 * `agent.ref`s: `AGENT_REF_CYCLE` when a definition is its own subagent below itself,
 * `AGENT_REF_TOO_DEEP` past {@link MAX_SUBAGENT_DEPTH} levels. Subagents given by path count as
 * the definitions they load to (an `.agent.md` tree is checked as it loads).
 */
export async function checkSubagentTree(definition: AgentDefinition, baseDir: string, chain: readonly AgentDefinition[] = []): Promise<void> {
  const here = [...chain, definition];
  for (const child of await resolveSubagents(definition, baseDir)) {
    const trail = [...here, child].map((entry) => entry.name).join(' → ');
    if (here.includes(child) || here.some((entry) => sameSource(entry, child))) {
      throw new RedflowError(
        errorInfo(ErrorCode.AGENT_REF_CYCLE, `the subagents ${trail} lead back to an agent already on the way: its runs would call each other without end`, {
          hint: 'remove one subagent of the cycle',
          path: 'subagents',
        }),
      );
    }
    if (here.length > MAX_SUBAGENT_DEPTH) {
      throw new RedflowError(
        errorInfo(ErrorCode.AGENT_REF_TOO_DEEP, `the subagents ${trail} nest ${here.length} levels deep; at most ${MAX_SUBAGENT_DEPTH} are allowed`, {
          hint: 'flatten the tree: name deep subagents higher up',
          path: 'subagents',
        }),
      );
    }
    await checkSubagentTree(child, baseDir, here);
  }
}

function sameSource(a: AgentDefinition, b: AgentDefinition): boolean {
  const source = definitionSource(a);
  return source !== undefined && source === definitionSource(b);
}

/**
 * The subagents of a definition as tools, served in this process as a flow's `agent.ref`s are
 * (`embeddedSubagents`): each call (input `{ task }`) runs the subagent as a child run, its log
 * `<runsDir>/<traceId>-<iteration>.jsonl` linked to the caller's; a call sent again after a crash
 * finds that log and continues it instead of starting another run.
 */
export function definitionSubagents(subagents: readonly AgentDefinition[], runsDir: string, runner: SubagentRunner): DefinitionSubagents {
  const specs: ToolSpec[] = [];
  const tools: ToolDefinition[] = [];
  for (const child of subagents) {
    const timeoutMs = child.runConfig?.timeoutMs ?? DEFAULT_SUBAGENT_TIMEOUT_MS;
    const description = `Subagent "${child.name}": ${child.description} Call it with {"task": …}: it does the task on its own and answers.`;
    const source = definitionSource(child) ?? child.name;
    specs.push(subagentToolSpec(child.name, { flow: source, timeoutMs, description }));
    const host = embeddedSubagents({ runsDir, run: (options) => runner.run(child, options), resume: (options) => runner.resume(child, options) });
    const subagent: SubagentDefinition = { name: child.name, nodeId: child.name, flow: source, flowPath: source, roots: [], timeoutMs, description };
    tools.push(host(subagent));
  }
  return { specs, tools };
}

/**
 * What runs a definition's subagents: an executor with the parent's settings (an `AgentExecutor`).
 *
 * @example
 * ```ts
 * const children: ChildExecutor = new AgentExecutor({ runsDir: '.redflow/runs' });
 * ```
 */
export interface ChildExecutor {
  start(definition: AgentDefinition, options: ExecuteOptions): Promise<AgentRun>;
  resume(definition: AgentDefinition, options: ResumeAgentOptions): Promise<AgentRun>;
}

/**
 * A definition's subagents, checked (no cycle, not too deep) and served as tools whose calls are
 * child runs on `children` (an executor with the parent's settings but its model), each logged
 * beside the caller's log in `runsDir`.
 *
 * @example
 * ```ts
 * const subagents = await subagentsOf(definition, '.redflow/runs', 'agents/lead.ts', new AgentExecutor());
 * subagents.specs.map((spec) => spec.name); // the subagents' tool names
 * ```
 */
export async function subagentsOf(definition: AgentDefinition, runsDir: string, modulePath: string | undefined, children: ChildExecutor): Promise<DefinitionSubagents> {
  const from = modulePath ?? definitionSource(definition);
  const baseDir = from === undefined ? process.cwd() : path.dirname(path.resolve(from));
  await checkSubagentTree(definition, baseDir);
  // A subagent runs unattended: a question to a person is left unanswered (its run ends escalated).
  const unattended = () => undefined;
  const runner: SubagentRunner = {
    run: async (child, run) => {
      const source = definitionSource(child);
      // The task is the child's input: its query, unless it has its own that uses ${task}.
      const definitionForTask = child.promptConfig.query === undefined && child.inputConfig === undefined ? { ...child, promptConfig: { ...child.promptConfig, query: '${task}' } } : child;
      const started = await children.start(definitionForTask, {
        inputs: { task: run.input },
        traceId: run.traceId,
        logPath: run.logPath,
        parent: run.parent,
        signal: run.signal,
        onQuestion: unattended,
        ...(source !== undefined && { modulePath: source }),
      });
      return { finished: () => started.handle.result };
    },
    resume: async (child, run) => {
      const resumed = await children.resume(child, { logPath: run.logPath, signal: run.signal, onQuestion: unattended, ...(run.answer !== undefined && { answer: run.answer }) });
      return { finished: () => resumed.handle.result };
    },
  };
  return definitionSubagents(await resolveSubagents(definition, baseDir), runsDir, runner);
}
