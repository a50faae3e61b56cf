import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { ToolModuleConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../errors.js';
import { loadModuleTool } from '../actors/tools/moduleTool.js';
import { MAX_SUBAGENT_DEPTH } from '../machines/subagents.js';
import { checkAgentDefinition, type AgentDefinition, type ModelConfig } from './agentDefinition.js';
import type { DefinitionTool } from './agentTool.js';
import { markdownError, parseAgentMarkdown, type FrontMatterKey, type ParsedAgentMarkdown } from './agentMarkdown.js';
import { rememberSource } from './definitionSources.js';

// Loaded only through `await import()` (by loadAgentDefinitionModule), with the Markdown reader.

/** The keys of `limits`: a definition's runConfig. */
const LIMIT_KEYS = new Set(['maxTurns', 'timeoutMs', 'waitTimeoutMs']);
/** Where each part of a definition comes from in the file, to give a definition's problem its line. */
const KEY_OF_FIELD: Readonly<Record<string, FrontMatterKey>> = {
  name: 'name',
  description: 'description',
  modelConfig: 'model',
  runConfig: 'limits',
  toolConfig: 'tools',
  inputConfig: 'inputs',
  outputConfig: 'outputSchema',
  subagents: 'subagents',
};

/** How an `.agent.md` file is loaded. */
export interface AgentMarkdownOptions {
  /** Loads a subagent that is a definition module (`loadAgentDefinitionModule`, passed in: it loads this file's module). */
  readonly loadModule?: (file: string) => Promise<AgentDefinition>;
  /** The real paths of the `.agent.md` files above this one, outermost first (cycle and depth checks). */
  readonly chain?: readonly string[];
  /** How messages name the file. Default: as given. */
  readonly shownAs?: string;
}

type SubagentChain = readonly string[];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The file's tools: each a path of a tool module or a `tool.module` node's config, relative to the file. */
async function toolsOf(parsed: ParsedAgentMarkdown, baseDir: string, shownAs: string): Promise<DefinitionTool[]> {
  const tools = parsed.frontMatter.tools;
  if (tools === undefined) return [];
  const line = parsed.keyLines.tools ?? 1;
  const hint = 'tools is a list of tool modules relative to this file: - ./tools/search.mjs, or - { module: ./tools.mjs, export: search }';
  if (!Array.isArray(tools)) throw markdownError(shownAs, line, 'tools must be a list', hint);
  const loaded: DefinitionTool[] = [];
  for (const [i, entry] of tools.entries()) {
    const itemLine = parsed.itemLines.tools?.[i] ?? line;
    const config = typeof entry === 'string' ? { module: entry } : entry;
    if (!isObject(config) || typeof config.module !== 'string') throw markdownError(shownAs, itemLine, `tools[${i}] names no module`, hint);
    try {
      loaded.push(await loadModuleTool(config as unknown as ToolModuleConfig, baseDir));
    } catch (error) {
      if (!(error instanceof RedflowError)) throw error;
      throw markdownError(shownAs, itemLine, error.message, error.hint ?? hint, error.code);
    }
  }
  return loaded;
}

/** The file's subagents, loaded (an `.agent.md` below this one recursively, cycles and depth refused as for `agent.ref`). */
async function subagentsOf(parsed: ParsedAgentMarkdown, baseDir: string, shownAs: string, chain: SubagentChain, options: AgentMarkdownOptions): Promise<AgentDefinition[]> {
  const entries = parsed.frontMatter.subagents;
  if (entries === undefined) return [];
  const line = parsed.keyLines.subagents ?? 1;
  if (!Array.isArray(entries)) throw markdownError(shownAs, line, 'subagents must be a list of paths', 'subagents: [./reviewer.agent.md, ./summarizer.ts]');
  const loaded: AgentDefinition[] = [];
  for (const [i, entry] of entries.entries()) {
    const itemLine = parsed.itemLines.subagents?.[i] ?? line;
    if (typeof entry !== 'string') throw markdownError(shownAs, itemLine, `subagents[${i}] must be a path`, 'give the path of an .agent.md file or a definition module, relative to this file');
    const file = path.resolve(baseDir, entry);
    const real = await realpath(file).catch(() => undefined);
    if (real === undefined) {
      throw markdownError(shownAs, itemLine, `the subagent ${entry} does not exist`, 'check the path: it is relative to the file that names it', ErrorCode.AGENT_REF_NOT_FOUND);
    }
    if (chain.includes(real)) {
      throw markdownError(shownAs, itemLine, `the subagent ${entry} leads back to an agent already on the way: its runs would call each other without end`, 'remove one subagent of the cycle', ErrorCode.AGENT_REF_CYCLE);
    }
    if (chain.length > MAX_SUBAGENT_DEPTH) {
      throw markdownError(shownAs, itemLine, `the subagent ${entry} nests subagents ${chain.length} levels deep; at most ${MAX_SUBAGENT_DEPTH} are allowed`, 'flatten the tree: name deep subagents higher up', ErrorCode.AGENT_REF_TOO_DEEP);
    }
    if (real.endsWith('.md')) loaded.push(await loadAgentMarkdown(real, { ...options, chain, shownAs: entry }));
    else if (options.loadModule !== undefined) loaded.push(await options.loadModule(real));
    else throw markdownError(shownAs, itemLine, `the subagent ${entry} is a module, which this loader cannot load`, 'load the file with loadAgentDefinitionModule');
  }
  return loaded;
}

/** The file's `limits`: the definition's runConfig, an unknown limit refused with its line. */
function limitsOf(parsed: ParsedAgentMarkdown, shownAs: string): Record<string, unknown> | undefined {
  const limits = parsed.frontMatter.limits;
  if (limits === undefined) return undefined;
  const line = parsed.keyLines.limits ?? 1;
  if (!isObject(limits)) throw markdownError(shownAs, line, 'limits must be a mapping', 'limits: { maxTurns: 6, timeoutMs: 60000 }');
  const unknown = Object.keys(limits).find((key) => !LIMIT_KEYS.has(key));
  if (unknown !== undefined) throw markdownError(shownAs, line, `unknown limit "${unknown}"`, `the limits are ${[...LIMIT_KEYS].join(', ')}`);
  return limits;
}

/** The definition an `.agent.md` file describes, before it is checked. */
function definitionOf(parsed: ParsedAgentMarkdown, file: string, tools: DefinitionTool[], subagents: AgentDefinition[], shownAs: string): Record<string, unknown> {
  const fm = parsed.frontMatter;
  const limits = limitsOf(parsed, shownAs);
  const callable = new Set([...tools, ...subagents].map((entry) => entry.name));
  parsed.reactCycle?.actions.forEach((action, i) => {
    if (callable.has(action.name)) return;
    throw markdownError(
      shownAs,
      parsed.actionLines[i] ?? parsed.bodyLine,
      `the REACT_CYCLE action "${action.name}" names no tool of the agent (${[...callable].join(', ') || 'it has none'})`,
      'add the tool module to tools (or the agent to subagents), or fix the action\'s name',
    );
  });
  return {
    name: fm.name ?? path.basename(file).replace(/\.agent\.md$/i, '').replace(/\.md$/i, ''),
    description: fm.description,
    promptConfig: {
      systemPrompt: parsed.systemPrompt,
      ...(fm.query !== undefined && { query: fm.query }),
      ...(parsed.reactCycle !== undefined && { reactCycle: parsed.reactCycle }),
    },
    modelConfig: fm.model as ModelConfig,
    // `verification` is a run setting of the definition, beside the limits (docs/verification.md).
    ...((limits !== undefined || fm.verification !== undefined) && { runConfig: { ...limits, ...(fm.verification !== undefined && { verification: fm.verification }) } }),
    ...(tools.length > 0 && { toolConfig: { tools } }),
    ...(fm.inputs !== undefined && { inputConfig: { inputs: fm.inputs } }),
    ...(fm.outputSchema !== undefined && { outputConfig: { outputName: 'result', schema: fm.outputSchema } }),
    ...(subagents.length > 0 && { subagents }),
  };
}

/**
 * Loads the agent an `.agent.md` file describes: its front matter (name, description, model,
 * tools, limits, inputs, query, outputSchema, subagents, verification), its body as the system prompt, its
 * REACT_CYCLE as `promptConfig.reactCycle`. Tool modules and subagents are relative to the file.
 *
 * @throws RedflowError `AGENT_MARKDOWN_INVALID` (with the line), `AGENT_REF_NOT_FOUND`,
 *   `AGENT_REF_CYCLE`, `AGENT_REF_TOO_DEEP`, a tool module's `TOOL_MODULE_INVALID`,
 *   `FLOW_NOT_FOUND` when there is no such file.
 * @example
 * ```ts
 * const auditor = await loadAgentMarkdown('examples/security-audit/security-audit.agent.md');
 * ```
 */
export async function loadAgentMarkdown(file: string, options: AgentMarkdownOptions = {}): Promise<AgentDefinition> {
  const { chain = [], shownAs = file } = options;
  const absolute = path.resolve(file);
  const real = await realpath(absolute).catch(() => undefined);
  const text = real === undefined ? undefined : await readFile(real, 'utf8').catch(() => undefined);
  if (real === undefined || text === undefined) {
    throw new RedflowError({ code: ErrorCode.FLOW_NOT_FOUND, message: `there is no agent file ${JSON.stringify(shownAs)}`, hint: 'give the path of an .agent.md file' });
  }
  const parsed = parseAgentMarkdown(text, shownAs);
  const baseDir = path.dirname(real);
  const tools = await toolsOf(parsed, baseDir, shownAs);
  const subagents = await subagentsOf(parsed, baseDir, shownAs, [...chain, real], options);
  const definition = definitionOf(parsed, real, tools, subagents, shownAs);
  try {
    checkAgentDefinition(definition);
  } catch (error) {
    if (!(error instanceof RedflowError)) throw error;
    const field = (error.path ?? '').split(/[.[]/)[0] ?? '';
    const key = error.path?.startsWith('runConfig.verification') === true ? 'verification' : KEY_OF_FIELD[field];
    const line = (key === undefined ? undefined : parsed.keyLines[key]) ?? (field === 'promptConfig' ? parsed.bodyLine : 1);
    throw markdownError(shownAs, line, error.message, error.hint ?? 'see docs/agent-markdown.md');
  }
  rememberSource(definition, real);
  return definition;
}
