import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ModelLlmConfig } from '../contracts/schema-types.js';
import { describeSchemaErrors, validators } from '../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { locateJsonSyntaxError } from '../files/jsonSyntaxError.js';
import { isLoopbackUrl } from '../actors/loopbackHost.js';
import { resolveModelConfig } from '../actors/models/nodeModel.js';
import { buildModel } from '../runtime/buildModel.js';
import type { StepModelFactory } from './reactStepService.js';

/**
 * The models file of the step service (`redflow serve --models <file>`): the names clients may put
 * in `llm_config.modelName`, each with the same settings as a flow's `model.llm` node.
 *
 * ```json
 * { "models": { "gpt-4o": { "provider": "openai", "model": "gpt-4o" },
 *               "claude": { "provider": "anthropic", "model": "claude-sonnet-4-5" } } }
 * ```
 */
export interface StepModelsFile {
  readonly models: Readonly<Record<string, ModelLlmConfig>>;
}

const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,199}$/;

/**
 * Reads and checks a models file, at startup: every entry is checked as a `model.llm` config, so a
 * mistake stops the server with its name and path instead of failing a client's step later.
 * Relative files an entry names (a scripted model's `answersFile`) start from the file's folder.
 * Keys are not needed at startup: a step that brings its own (`user_api_keys.llmKey`) uses it.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` naming the entry and what is wrong.
 * @example
 * ```ts
 * const models = await loadStepModels('models.json', process.env);
 * const model = await models.get('gpt-4o')?.(undefined);
 * ```
 */
export async function loadStepModels(file: string, env: NodeJS.ProcessEnv): Promise<Map<string, StepModelFactory>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw invalid(`the models file ${file} cannot be read`, 'give the path of a JSON file: { "models": { "<name>": { "provider": …, "model": … } } }');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const at = locateJsonSyntaxError(text);
    throw invalid(`the models file ${file} is not JSON${at === undefined ? '' : ` (line ${at.line}, column ${at.column}: ${at.reason})`}`, 'fix the JSON syntax');
  }
  const models = (parsed as { models?: unknown } | null)?.models;
  if (typeof models !== 'object' || models === null || Array.isArray(models)) {
    throw invalid(`the models file ${file} has no "models" object`, 'write { "models": { "<name>": { "provider": …, "model": … } } }');
  }
  const baseDir = path.dirname(path.resolve(file));
  const found = new Map<string, StepModelFactory>();
  for (const [name, config] of Object.entries(models)) {
    if (!MODEL_NAME.test(name)) throw invalid(`the model name ${JSON.stringify(name.slice(0, 60))} in ${file} is not usable`, 'names are 1–200 letters, digits, and _ . : / -', `/models/${name}`);
    if (!validators.modelLlmConfig(config)) {
      throw invalid(`the model "${name}" in ${file}: ${describeSchemaErrors(validators.modelLlmConfig.errors)}`, 'each entry takes the settings of a model.llm node', `/models/${name}`);
    }
    const plan = { model: { nodeId: name, config: config as ModelLlmConfig }, baseDir };
    // A step's own settings (its llm_config) go over the file's, for that step only.
    const build = (apiKey: string | undefined, settings = {}) => buildModel({ ...plan, model: { ...plan.model, config: { ...plan.model.config, ...settings } } }, { env, modelApiKey: apiKey });
    found.set(name, Object.assign(build, { servedLocally: servedLocally(config as ModelLlmConfig, env) }));
  }
  return found;
}

/**
 * True when the model's server is on this machine: a scripted model, or a server at a loopback
 * address (`localhost`, `127.x`, `::1`), as Ollama, vLLM and llama.cpp are by default.
 */
function servedLocally(config: ModelLlmConfig, env: NodeJS.ProcessEnv): boolean {
  if (config.provider === 'scripted') return true;
  try {
    return isLoopbackUrl(resolveModelConfig(config, env, { keyGiven: true }).config.baseUrl);
  } catch {
    // A config its provider refuses is refused at the step, with its own error: no key is local to it.
    return false;
  }
}

function invalid(message: string, hint: string, where?: string): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.MODEL_CONFIG_INVALID, message, { hint, ...(where !== undefined && { path: where }) }));
}
