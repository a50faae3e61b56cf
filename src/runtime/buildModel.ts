import { readFile } from 'node:fs/promises';
import type { ModelLlmConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { flowFileInsideRoots } from '../files/fileRoots.js';
import { locateJsonSyntaxError } from '../files/jsonSyntaxError.js';
import type { ModelActor } from '../actors/model.js';
import { createScriptedModel } from '../actors/models/scriptedModel.js';
import { createNodeModel } from '../actors/models/nodeModel.js';
import type { RunPlan } from './runPlan.js';

/** Options of {@link buildModel}. */
export interface ModelBuildOptions {
  /** Environment for the model's settings and key (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Use these scripted answers instead of the flow's model. */
  readonly script?: readonly unknown[];
  /** Folders besides the flow file's own where its `answersFile` may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
  /**
   * The API key the run's caller brought ("bring your own key"): every call of this model sends it
   * instead of the key in `$<apiKeyEnv>`, which is then not required. It goes to the model beside
   * each request, never in it, so no event, log line or trace message carries it (see
   * `ModelCallOptions.apiKey`). Ignored by a scripted model.
   */
  readonly modelApiKey?: string | undefined;
}

/**
 * Builds the plan's model actor: the scripted model (answers inline or from `answersFile`), an
 * Anthropic Messages one (`provider: "anthropic"`) or an OpenAI-compatible one, whose name and key
 * come from the node or the environment (or the key from `modelApiKey`). Only what hosts the model
 * calls it (an embedded run, a model worker). The provider libraries are loaded at the first call.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` when the model cannot be set up (no model name, no
 *   answers, an unreadable answers file); `MODEL_PROVIDER_UNKNOWN`; `MODEL_KEY_MISSING`.
 *
 * @example
 * ```ts
 * const model = await buildModel(planRun(flow, baseDir), { env: process.env });
 * ```
 */
export async function buildModel(plan: Pick<RunPlan, 'model' | 'baseDir'>, options: ModelBuildOptions = {}): Promise<ModelActor> {
  if (options.script) return createScriptedModel(options.script);
  const config = plan.model.config;
  if (config.provider !== 'scripted') return createNodeModel(config, options.env ?? process.env, { apiKey: options.modelApiKey });
  const answers = await scriptedAnswers(config, plan.baseDir, options.allowFiles ?? []);
  return createScriptedModel(answers, config.verifications === undefined ? {} : { verifications: config.verifications as Record<number, unknown> });
}

async function scriptedAnswers(config: ModelLlmConfig, baseDir: string, allowFiles: readonly string[]): Promise<readonly unknown[]> {
  if (config.answers) return config.answers;
  if (!config.answersFile) {
    throw new RedflowError(
      errorInfo(ErrorCode.MODEL_CONFIG_INVALID, 'a scripted model needs "answers" or "answersFile"', {
        hint: 'give the answers inline ("answers": [...]) or in a JSON file ("answersFile": "answers.json")',
      }),
    );
  }
  // Checked before it is read; named in messages as the flow wrote it, never by its absolute path.
  const file = await flowFileInsideRoots(config.answersFile, 'scripted answers file', { baseDir, roots: [baseDir, ...allowFiles] });
  return readAnswersFile(file, JSON.stringify(config.answersFile));
}

/**
 * Reads a JSON file holding an array of scripted answers. Messages name it `shownAs` (default its
 * path) and never quote its content: a flow's answers file is read by `redflow serve` too.
 */
export async function readAnswersFile(file: string, shownAs: string = file): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    throw new RedflowError(
      errorInfo(ErrorCode.ANSWERS_FILE_NOT_FOUND, `cannot read the scripted answers ${shownAs}: ${errno === 'ENOENT' ? 'there is no such file' : (errno ?? String(error))}`, {
        hint: 'give the path of a JSON file holding an array of answers (a relative --script is from the working directory, a flow\'s answersFile from the flow file\'s folder)',
      }),
    );
  }
  let answers: unknown;
  try {
    answers = JSON.parse(text);
  } catch {
    // Where, not what: JSON.parse's own message quotes the file's text.
    const at = locateJsonSyntaxError(text);
    throw new RedflowError(
      errorInfo(ErrorCode.MODEL_CONFIG_INVALID, `the scripted answers ${shownAs} are not valid JSON${at ? ` (line ${at.line}, column ${at.column})` : ''}`, {
        hint: 'the file must hold a JSON array of answers, one per iteration',
      }),
    );
  }
  if (!Array.isArray(answers)) {
    throw new RedflowError(
      errorInfo(ErrorCode.MODEL_CONFIG_INVALID, `the scripted answers ${shownAs} must be a JSON array of answers, one per iteration`),
    );
  }
  return answers;
}
