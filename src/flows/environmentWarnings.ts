import type { ModelLlmConfig, ToolPostgresConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../errors.js';
import { resolveModelConfig } from '../actors/models/nodeModel.js';
import { missingConnectionStringEnv } from '../actors/tools/postgresConnectionEnv.js';
import { flowDiagnostic, Severity, type FlowDiagnostic } from './diagnostics.js';
import { NodeType } from './nodeTypes.js';
import type { ResolvedFlow } from './validateFlow.js';

/**
 * The `ENV_NOT_SET` warnings of a valid flow in the environment `env` where its runs would run:
 * a `model.llm` whose API key (or model name) a run would find missing, a `tool.postgres`
 * without its connection string. Each check is the one a run makes when it builds the node
 * (`resolveModelConfig`, `missingConnectionStringEnv`), so a flow warned about here fails at the
 * start of a run in the same environment, and one not warned about does not fail for this.
 *
 * Kept out of `validateFlow`, which is pure and runs in the browser: the command line and the
 * server call this with their own environment.
 *
 * @example
 * ```ts
 * if (validation.ok) validation.warnings.push(...environmentWarnings(validation.flow, process.env));
 * ```
 */
export function environmentWarnings(flow: ResolvedFlow, env: NodeJS.ProcessEnv): FlowDiagnostic[] {
  const warnings: FlowDiagnostic[] = [];
  const pathOf = (nodeId: string): string => `nodes[${flow.definition.nodes.findIndex((node) => node.id === nodeId)}].config`;
  for (const model of modelProblems((flow.model.config ?? {}) as ModelLlmConfig, env)) {
    warnings.push(
      flowDiagnostic(Severity.Warning, ErrorCode.ENV_NOT_SET, `${NodeType.ModelLlm} '${flow.model.id}': ${model.message}`, {
        hint: model.hint,
        path: pathOf(flow.model.id),
        nodeId: flow.model.id,
      }),
    );
  }
  for (const tool of flow.tools) {
    if (tool.node.type !== NodeType.ToolPostgres) continue;
    const variable = missingConnectionStringEnv((tool.node.config ?? {}) as unknown as ToolPostgresConfig, env);
    if (variable === undefined) continue;
    warnings.push(
      flowDiagnostic(
        Severity.Warning,
        ErrorCode.ENV_NOT_SET,
        `${NodeType.ToolPostgres} '${tool.node.id}': its connection string comes from $${variable}, which is not set: a run would stop before it starts`,
        {
          hint: `export ${variable}=postgres://user:password@host:5432/database where the tool runs (the embedded run, or the tool worker)`,
          path: pathOf(tool.node.id),
          nodeId: tool.node.id,
        },
      ),
    );
  }
  return warnings;
}

/** What a run building this model would find missing in `env`: its name, its key, or both. */
function modelProblems(config: ModelLlmConfig, env: NodeJS.ProcessEnv): { message: string; hint: string | undefined }[] {
  if (config.provider === 'scripted') return [];
  const problems: { message: string; hint: string | undefined }[] = [];
  let checked = config;
  for (;;) {
    try {
      resolveModelConfig(checked, env);
      return problems;
    } catch (error) {
      // Only what the environment can supply: a model name from $REDFLOW_MODEL, the key.
      if (!(error instanceof RedflowError) || (error.code !== ErrorCode.MODEL_KEY_MISSING && error.code !== ErrorCode.MODEL_CONFIG_INVALID)) throw error;
      problems.push({ message: `${error.message}: a run would stop before it starts`, hint: error.hint });
      // The name is checked before the key: with a stand-in name, the key is checked too.
      if (error.code === ErrorCode.MODEL_KEY_MISSING || checked !== config) return problems;
      checked = { ...config, model: 'any-model' };
    }
  }
}
