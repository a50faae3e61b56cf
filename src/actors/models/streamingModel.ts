import type { TokenUsage } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import { REDACTED, redactSecrets } from '../../secrets/secrets.js';
import { withScopedSecret } from '../../secrets/secretScope.js';
import { startDeadline } from '../deadline.js';
import { deliverChunk, type ModelActor, type ModelAnswer, type ModelCallOptions, type ModelRequest } from '../model.js';
import { abortError, retryWithBackoff, type RetryOptions } from '../retry.js';
import { createChunkRedactor } from './chunkRedactor.js';
import { AttemptError, attemptFailure, type FailureContext } from './modelFailure.js';
import { sendableKey, type CheckedSettings } from './modelSettings.js';

/** What one streamed answer came to. */
export interface StreamedAnswer {
  readonly text: string;
  readonly usage: TokenUsage | undefined;
  /** Why the model stopped, in the provider's words, when the stream said. */
  readonly finishReason?: string | undefined;
}

/** What a provider adds to {@link createStreamingModel}: how to make one attempt, and its words for failures. */
export interface StreamingProvider {
  /** The model's `kind`: `openai`, `anthropic`. */
  readonly kind: string;
  /** Where the configured key comes from, for the hint of a 401/403 (e.g. `it is read from $OPENAI_API_KEY …`). */
  readonly keyHint: string;
  /** What the API root must look like, for the hint of a 404. */
  readonly notFoundHint: string;
  /**
   * One attempt: sends the request with `apiKey` (none when undefined) through the guarded fetch,
   * streams the answer and returns it. Must stop when `signal` aborts. Throws what it meets; the
   * caller classifies it. `onText`, when given, sees each piece of the answer's text as it comes.
   */
  streamOnce(request: ModelRequest, apiKey: string | undefined, signal: AbortSignal, onText?: (piece: string) => void): Promise<StreamedAnswer>;
}

/**
 * A model actor around a provider's streaming call, with the policy every provider shares:
 *
 * - retries are ours, not the library's (the libraries get `maxRetries: 0`): our waits end the
 *   moment the run is aborted, `Retry-After` is honoured up to the backoff's cap, the attempts
 *   are counted for the answer, and both providers behave the same;
 * - each attempt has its own deadline (`timeoutMs`) over the request and the whole stream;
 * - a key given to the call ({@link ModelCallOptions.apiKey}) replaces the configured one for that
 *   call and is a secret of the call's own scope (`withScopedSecret`): redacted from what the call
 *   records, answers and throws, never from other requests' output;
 * - the answer text and every error are redacted of the keys and the process's other secrets
 *   before they leave.
 */
export function createStreamingModel(settings: CheckedSettings, provider: StreamingProvider, retry: RetryOptions = {}): ModelActor {
  const { shownUrl, model, timeoutMs, maxRetries } = settings;

  /** One attempt under its deadline; failures come out classified. */
  const attempt = async (
    request: ModelRequest,
    apiKey: string | undefined,
    runSignal: AbortSignal,
    context: FailureContext,
    onText: ((piece: string) => void) | undefined,
  ): Promise<StreamedAnswer> => {
    const deadline = startDeadline(runSignal, timeoutMs);
    try {
      return await provider.streamOnce(request, apiKey, deadline.signal, onText);
    } catch (error) {
      if (runSignal.aborted) throw abortError(runSignal, 'the model request');
      if (deadline.timedOut()) {
        throw new AttemptError({
          code: ErrorCode.MODEL_TIMEOUT,
          message: `${shownUrl} did not answer within ${timeoutMs} ms`,
          hint: 'The model may be slow or overloaded (a local model may still be loading); raise timeoutMs or use a smaller model.',
          retryable: true,
        });
      }
      throw attemptFailure(error, context);
    } finally {
      deadline.dispose();
    }
  };

  return {
    kind: provider.kind,
    model,
    complete(request: ModelRequest, signal: AbortSignal, options?: ModelCallOptions): Promise<ModelAnswer> {
      if (signal.aborted) return Promise.reject(abortError(signal, 'the model request'));
      const callKey = options?.apiKey?.trim() || undefined;
      // Scoped before anything can fail, so even a refusal of the key cannot show it; scoped, not
      // process-wide, so a client's "key" (which could be any word) is cut from this call's output only.
      return withScopedSecret(callKey, () => call(request, signal, options, callKey));
    },
  };

  /** One call, inside the scope of its key. */
  async function call(request: ModelRequest, signal: AbortSignal, options: ModelCallOptions | undefined, callKey: string | undefined): Promise<ModelAnswer> {
    const apiKey = callKey ?? settings.apiKey;
    // The registry ignores keys too short to be told from words; this model cuts its own keys anyway.
    const redact = (text: string): string => redactSecrets(apiKey === undefined ? text : text.split(apiKey).join(REDACTED));
    const context: FailureContext = {
      shownUrl,
      model,
      keyHint: callKey === undefined ? provider.keyHint : 'it is the key given with this request',
      notFoundHint: provider.notFoundHint,
    };
    let attemptsMade = 0;
    try {
      if (callKey !== undefined && !sendableKey(callKey)) {
        throw new RedflowError({
          code: ErrorCode.MODEL_REQUEST_REJECTED,
          message: 'the API key given with the request contains characters that cannot be sent in an HTTP header',
          hint: 'Check the key (stray quotes, spaces or line breaks?).',
        });
      }
      const onChunk = options?.onChunk;
      // The JSON reader is loaded by the first call that streams, not by `import 'redflow'`.
      const answerText = onChunk === undefined ? undefined : (await import('./answerText.js')).createAnswerTextExtractor;
      const { value, attempts } = await retryWithBackoff(
        async (n) => {
          attemptsMade = n;
          if (onChunk === undefined || answerText === undefined) return attempt(request, apiKey, signal, context, undefined);
          // Each attempt starts the answer again; what an earlier one showed is void (its `attempt` says so).
          // The pieces shown are the answer's text only (its message), escapes decoded, then redacted:
          // a key spelled with escapes is a key again once decoded.
          const text = answerText();
          const chunks = createChunkRedactor(redact);
          const show = (shown: string) => {
            if (shown !== '') deliverChunk(onChunk, { text: shown, attempt: n });
          };
          const answer = await attempt(request, apiKey, signal, context, (piece) => show(chunks.push(text.push(piece))));
          show(chunks.push(text.flush()) + chunks.flush());
          return answer;
        },
        { ...retry, maxRetries, signal },
      );
      const text = redact(value.text);
      const finished = value.finishReason === undefined ? {} : { finishReasons: [value.finishReason] };
      return value.usage === undefined ? { text, attempts, ...finished } : { text, usage: value.usage, attempts, ...finished };
    } catch (error) {
      if (signal.aborted) throw abortError(signal, 'the model request');
      throw finalError(error, attemptsMade, redact);
    }
  }
}

/** The error a call ends with: redacted, and saying how hard it tried when it was worth retrying. */
function finalError(error: unknown, attempts: number, redact: (text: string) => string): unknown {
  if (!(error instanceof RedflowError)) return error;
  const info = error.toInfo();
  const tried = error instanceof AttemptError ? ` (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})` : '';
  return new RedflowError({
    ...info,
    message: `${redact(info.message)}${tried}`,
    ...(info.hint !== undefined && { hint: redact(info.hint) }),
  });
}
