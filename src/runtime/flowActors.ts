import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  AgentCoreReactConfig,
  MemoryKvConfig,
  ModelLlmConfig,
  ToolHttpConfig,
  ToolModuleConfig,
  ToolPostgresConfig,
  TriggerInputConfig,
} from '../contracts/schema-types.js';
import { compileUserSchema, type InputValidator } from '../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';
import { NodeType } from '../flows/nodeTypes.js';
import type { MemoryStore } from '../actors/memory.js';
import type { ModelActor } from '../actors/model.js';
import type { ToolDefinition } from '../actors/tool.js';
import { createScriptedModel } from '../actors/models/scriptedModel.js';
import { createOpenAiChatModel, resolveOpenAiConfig } from '../actors/models/openAiChatModel.js';
import { createHttpTool } from '../actors/tools/httpTool.js';
import { loadModuleTool } from '../actors/tools/moduleTool.js';
import { createInProcessMemoryStore } from '../actors/memory/inProcessMemoryStore.js';
import { createFileMemoryStore } from '../actors/memory/fileMemoryStore.js';

/** Options of {@link buildFlowActors}. */
export interface FlowActorOptions {
  /** The flow file's directory: relative paths in node configs are resolved from it. */
  readonly baseDir: string;
  /** Environment for model settings and keys, and `tool.postgres` connection strings (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Use these scripted answers instead of the flow's model (e.g. to run seed 001's example offline). */
  readonly script?: readonly unknown[];
}

/** The actors a flow's nodes describe, ready to serve. */
export interface FlowActors {
  readonly agent: AgentCoreReactConfig;
  readonly model: ModelActor;
  /** Every connected tool; the model may call those in `agent.allowedTools`. */
  readonly tools: readonly ToolDefinition[];
  readonly memory?: { readonly store: MemoryStore; readonly maxTurns: number; readonly nodeId: string };
  /** Checks a run's input against the trigger's inputSchema, when it has one. */
  readonly checkInput?: InputValidator;
  /**
   * Releases what the tools hold (a `tool.postgres` pool): call it once the run is over and the
   * actors are no longer served. Never rejects; safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Builds the model, tool and memory actors of a validated flow: the scripted or OpenAI-compatible
 * model, `tool.http`, `tool.module` (modules are imported here) and `tool.postgres` tools, and
 * `memory.kv`. Call the result's `close()` when done with it: a `tool.postgres` holds a pool.
 *
 * @example
 * ```ts
 * const { validation, baseDir } = await loadFlowFile('flow.json');
 * if (validation.ok) { const actors = await buildFlowActors(validation.flow, { baseDir }); }
 * ```
 */
export async function buildFlowActors(flow: ResolvedFlow, options: FlowActorOptions): Promise<FlowActors> {
  const env = options.env ?? process.env;
  const model = options.script
    ? createScriptedModel(options.script)
    : await buildModel((flow.model.config ?? {}) as ModelLlmConfig, options.baseDir, env);
  const tools: ToolDefinition[] = [];
  const closers: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(closers.map((closeOne) => closeOne()));
  };
  try {
    for (const tool of flow.tools) {
      if (tool.node.type === NodeType.ToolHttp) {
        tools.push(createHttpTool({ ...(tool.node.config as unknown as ToolHttpConfig), name: tool.name }));
      } else if (tool.node.type === NodeType.ToolModule) {
        tools.push(await loadModuleTool({ ...(tool.node.config as unknown as ToolModuleConfig), name: tool.name }, options.baseDir));
      } else if (tool.node.type === NodeType.ToolPostgres) {
        // Loaded only for flows that use it: the PostgreSQL driver is not needed otherwise.
        const { createPostgresTool } = await import('../actors/tools/postgresTool.js');
        const postgres = createPostgresTool({ ...(tool.node.config as unknown as ToolPostgresConfig), name: tool.name }, { env });
        tools.push(postgres);
        closers.push(() => postgres.close());
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  const result: { -readonly [K in keyof FlowActors]: FlowActors[K] } = { agent: flow.agent.config, model, tools, close };
  if (flow.memory) {
    const config = (flow.memory.config ?? {}) as MemoryKvConfig;
    const store =
      config.store === 'file'
        ? createFileMemoryStore(path.resolve(options.baseDir, config.path ?? '.redflow/memory'))
        : createInProcessMemoryStore();
    result.memory = { store, maxTurns: config.maxTurns ?? 20, nodeId: flow.memory.id };
  }
  const inputSchema = (flow.trigger?.config as TriggerInputConfig | undefined)?.inputSchema;
  if (inputSchema) result.checkInput = compileUserSchema(inputSchema);
  return result;
}

async function buildModel(config: ModelLlmConfig, baseDir: string, env: NodeJS.ProcessEnv): Promise<ModelActor> {
  if (config.provider !== 'scripted') return createOpenAiChatModel(resolveOpenAiConfig(config, env));
  if (config.answers) return createScriptedModel(config.answers);
  if (!config.answersFile) {
    throw new RedflowError(
      errorInfo(ErrorCode.MODEL_CONFIG_INVALID, 'a scripted model needs "answers" or "answersFile"', {
        hint: 'give the answers inline ("answers": [...]) or in a JSON file ("answersFile": "answers.json")',
      }),
    );
  }
  return createScriptedModel(await readAnswersFile(path.resolve(baseDir, config.answersFile)));
}

/** Reads a JSON file holding an array of scripted answers. */
export async function readAnswersFile(file: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    throw new RedflowError(
      errorInfo(ErrorCode.ANSWERS_FILE_NOT_FOUND, `cannot read the scripted answers ${file}: ${errno === 'ENOENT' ? 'there is no such file' : (errno ?? String(error))}`, {
        hint: 'give the path of a JSON file holding an array of answers (a relative --script is from the working directory, a flow\'s answersFile from the flow file\'s folder)',
      }),
    );
  }
  let answers: unknown;
  try {
    answers = JSON.parse(text);
  } catch (error) {
    throw new RedflowError(errorInfo(ErrorCode.MODEL_CONFIG_INVALID, `${file} is not JSON: ${(error as Error).message}`));
  }
  if (!Array.isArray(answers)) {
    throw new RedflowError(
      errorInfo(ErrorCode.MODEL_CONFIG_INVALID, `${file} must hold a JSON array of answers, one per iteration`),
    );
  }
  return answers;
}
