import { ErrorCode, RedflowError } from '../../errors.js';
import type { ModelActor, ModelAnswer, ModelCallOptions, ModelRequest } from '../model.js';
import type { ModelFallbackFailure } from '../../machines/protocol.js';
import { abortError } from '../retry.js';
import { quote } from './modelFailure.js';

/** One model of a fallback chain: its actor and how the log names it. */
export interface FallbackCandidate {
  readonly provider: string;
  readonly model: string;
  readonly actor: ModelActor;
}

/** Failures after which another model may do better: the server, not the request or the key, is the problem. */
const HANDED_ON: ReadonlySet<string> = new Set([ErrorCode.MODEL_UNAVAILABLE, ErrorCode.MODEL_TIMEOUT, ErrorCode.MODEL_RATE_LIMITED, ErrorCode.MODEL_SERVER_ERROR]);

/** Words of a refusal that is about the request's format (constrained output, native tools), which another provider may take. */
const FORMAT_WORDS = /response_format|json_schema|json_object|tool_choice|\btools?\b|output_format/i;

/**
 * Whether `error` lets the next model of the chain try: a retryable failure the model gave up on,
 * or a refusal naming the request's format. Never a key refused (401/403): the next model would
 * hide a mistake the operator must see.
 *
 * @example
 * ```ts
 * if (!handsOn(error)) throw error;
 * ```
 */
export function handsOn(error: unknown): error is RedflowError {
  if (!(error instanceof RedflowError)) return false;
  if (HANDED_ON.has(error.code)) return true;
  return error.code === ErrorCode.MODEL_REQUEST_REJECTED && !/HTTP 40[13]\b/.test(error.message) && FORMAT_WORDS.test(error.message);
}

/**
 * A model actor that asks `candidates[0]` and, when it fails in a way another model may not
 * ({@link handsOn}), the next, in order. The answer says which model answered (`answeredBy`) and
 * which failed before it (`fallbacks`); when all fail, the error is the last one's code with a
 * message naming every model tried. Each candidate keeps its own retries and request format.
 *
 * @example
 * ```ts
 * const model = createFallbackModel([
 *   { provider: 'openai', model: 'gpt-4o-mini', actor: openAi },
 *   { provider: 'anthropic', model: 'claude-haiku-4-5', actor: anthropic },
 * ]);
 * ```
 */
export function createFallbackModel(candidates: readonly FallbackCandidate[]): ModelActor {
  const first = candidates[0];
  if (first === undefined) throw new Error('createFallbackModel needs at least one model');
  return {
    kind: first.actor.kind,
    model: first.model,
    complete: (request, signal, options) => completeInOrder(candidates, request, signal, options),
  };
}

async function completeInOrder(candidates: readonly FallbackCandidate[], request: ModelRequest, signal: AbortSignal, options: ModelCallOptions | undefined): Promise<ModelAnswer> {
  const failed: ModelFallbackFailure[] = [];
  // Attempt numbers keep growing across models, so a live view drops what a failed model streamed.
  let attemptOffset = 0;
  for (const [index, candidate] of candidates.entries()) {
    let lastAttempt = 0;
    const onChunk = options?.onChunk;
    const offset = attemptOffset;
    const shifted: ModelCallOptions | undefined =
      onChunk === undefined
        ? options
        : {
            ...options,
            onChunk: (chunk) => {
              lastAttempt = Math.max(lastAttempt, chunk.attempt);
              onChunk({ text: chunk.text, attempt: chunk.attempt + offset });
            },
          };
    try {
      const answer = await candidate.actor.complete(request, signal, shifted);
      const answeredBy = { provider: candidate.provider, model: candidate.model };
      return failed.length === 0 ? { ...answer, answeredBy } : { ...answer, answeredBy, fallbacks: failed };
    } catch (error) {
      if (signal.aborted) throw abortError(signal, 'the model request');
      if (!handsOn(error)) throw failed.length === 0 || !(error instanceof RedflowError) ? error : stoppedAt(error, candidate, failed);
      failed.push({ provider: candidate.provider, model: candidate.model, code: error.code, message: quote(error.message) });
      attemptOffset += Math.max(lastAttempt, 1);
      if (index === candidates.length - 1) throw allFailed(error, failed);
    }
  }
  throw new Error('unreachable: the loop returns or throws');
}

/** The error of a fallback that must not hand on (a refused key), its message naming the models that failed before it. */
function stoppedAt(error: RedflowError, candidate: FallbackCandidate, failed: readonly ModelFallbackFailure[]): RedflowError {
  const info = error.toInfo();
  const before = failed.map((entry) => `${entry.provider} ${entry.model} (${entry.code})`).join(', ');
  return new RedflowError({ ...info, message: `after ${before} failed, ${candidate.provider} ${candidate.model}: ${info.message}` });
}

/** The last model's error, its message naming every model tried. */
function allFailed(last: RedflowError, failed: readonly ModelFallbackFailure[]): RedflowError {
  const info = last.toInfo();
  const tried = failed.map((entry) => `${entry.provider} ${entry.model} (${entry.code})`).join(', ');
  return new RedflowError({
    ...info,
    message: `every model failed: ${tried}; the last: ${info.message}`,
    hint: `${info.hint ?? 'Check the models\' servers.'} Each model of the node's "fallbacks" was tried in order.`,
  });
}
