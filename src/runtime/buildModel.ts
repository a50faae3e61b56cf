import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ModelLlmConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ModelActor } from '../actors/model.js';
import { createScriptedModel } from '../actors/models/scriptedModel.js';
import { createOpenAiChatModel, resolveOpenAiConfig } from '../actors/models/openAiChatModel.js';
import type { RunPlan } from './runPlan.js';

/** Options of {@link buildModel}. */
export interface ModelBuildOptions {
  /** Environment for the model's settings and key (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Use these scripted answers instead of the flow's model. */
  readonly script?: readonly unknown[];
}

/**
 * Builds the plan's model actor: the scripted model (answers inline or from `answersFile`) or an
 * OpenAI-compatible one, whose name and key come from the node or the environment. Only what
 * hosts the model calls it (an embedded run, a model worker).
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` when the model cannot be set up (no model name, no
 *   answers, an unreadable answers file).
 *
 * @example
 * ```ts
 * const model = await buildModel(planRun(flow, baseDir), { env: process.env });
 * ```
 */
export async function buildModel(plan: Pick<RunPlan, 'model' | 'baseDir'>, options: ModelBuildOptions = {}): Promise<ModelActor> {
  if (options.script) return createScriptedModel(options.script);
  const config = plan.model.config;
  if (config.provider !== 'scripted') return createOpenAiChatModel(resolveOpenAiConfig(config, options.env ?? process.env));
  return createScriptedModel(await scriptedAnswers(config, plan.baseDir));
}

async function scriptedAnswers(config: ModelLlmConfig, baseDir: string): Promise<readonly unknown[]> {
  if (config.answers) return config.answers;
  if (!config.answersFile) {
    throw new RedflowError(
      errorInfo(ErrorCode.MODEL_CONFIG_INVALID, 'a scripted model needs "answers" or "answersFile"', {
        hint: 'give the answers inline ("answers": [...]) or in a JSON file ("answersFile": "answers.json")',
      }),
    );
  }
  return readAnswersFile(path.resolve(baseDir, config.answersFile));
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
