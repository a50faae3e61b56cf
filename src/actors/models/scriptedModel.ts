import { ErrorCode, RedflowError } from '../../errors.js';
import { deliverChunk, type ModelActor, type ModelAnswer, type ModelCallOptions, type ModelRequest } from '../model.js';
import { abortableSleep, abortError, type SleepFunction } from '../retry.js';

/** Options of {@link createScriptedModel}. */
export interface ScriptedModelOptions {
  /** Simulated latency of every answer, in ms. Aborting the run cuts it short. Default 0. */
  readonly delayMs?: number;
  /** How to wait for `delayMs`. Default real timers; must honour the signal. */
  readonly sleep?: SleepFunction;
  /**
   * The verifier's answers (an agent's `verification`), by the iteration of the answer verified:
   * a verification request (`purpose: "verification"`) of iteration `i` answers `verifications[i]`.
   * Keyed by iteration like the answers, so a resumed run is verified the same way.
   */
  readonly verifications?: Readonly<Record<number, unknown>>;
}

/** Turns one scripted answer into the text the model "says"; fails on values JSON cannot carry. */
function answerText(answer: unknown, index: number): string {
  if (typeof answer === 'string') return answer;
  let text: string | undefined;
  try {
    text = JSON.stringify(answer);
  } catch (error) {
    throw new RedflowError({
      code: ErrorCode.MODEL_CONFIG_INVALID,
      message: `scripted answer ${index + 1} cannot be turned into JSON: ${error instanceof Error ? error.message : String(error)}`,
      hint: 'Scripted answers must be strings or JSON values (no cycles, BigInt or functions).',
      path: `/answers/${index}`,
    });
  }
  if (text === undefined) {
    throw new RedflowError({
      code: ErrorCode.MODEL_CONFIG_INVALID,
      message: `scripted answer ${index + 1} is ${typeof answer}, which JSON cannot represent`,
      hint: 'Scripted answers must be strings or JSON values.',
      path: `/answers/${index}`,
    });
  }
  return text;
}

/**
 * A deterministic model for tests, demos and replays: iteration `i` answers `answers[i - 1]`.
 *
 * The answer depends only on `request.iteration`, never on how often the model was called, so a
 * run resumed after a crash is given the same answers it would have had. Strings are returned
 * exactly as written (they may be deliberately invalid JSON); any other value is sent as its JSON
 * text, serialised once when the model is created. An iteration beyond the script fails with
 * `MODEL_SCRIPT_EXHAUSTED`.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` when `answers` is not an array or holds a value JSON
 *   cannot represent.
 *
 * @example
 * ```ts
 * const model = createScriptedModel([
 *   { action: 'tool', tool: 'lookup', input: { id: 'A-1001' } },
 *   { action: 'final', message: 'Shipped.', confidence: 0.9 },
 * ]);
 * const answer = await model.complete({ traceId: 't', iteration: 1, messages: [] }, signal);
 * answer.text; // '{"action":"tool","tool":"lookup","input":{"id":"A-1001"}}'
 * ```
 */
export function createScriptedModel(answers: readonly unknown[], options: ScriptedModelOptions = {}): ModelActor {
  if (!Array.isArray(answers)) {
    throw new RedflowError({
      code: ErrorCode.MODEL_CONFIG_INVALID,
      message: `scripted model answers must be an array, got ${answers === null ? 'null' : typeof answers}`,
      hint: 'Give the model node an "answers" array, one answer per iteration.',
      path: '/answers',
    });
  }
  const texts: readonly string[] = answers.map(answerText);
  const verifications = new Map(Object.entries(options.verifications ?? {}).map(([iteration, verification], i) => [Number(iteration), answerText(verification, i)]));
  const delayMs = Math.max(0, options.delayMs ?? 0);
  const sleep = options.sleep ?? abortableSleep;

  return {
    kind: 'scripted',
    async complete(request: ModelRequest, signal: AbortSignal, call?: ModelCallOptions): Promise<ModelAnswer> {
      if (signal.aborted) throw abortError(signal, 'the scripted model call');
      const { iteration } = request;
      if (request.purpose === 'verification') return verificationAnswer(verifications, iteration);
      const text = Number.isInteger(iteration) && iteration >= 1 ? texts[iteration - 1] : undefined;
      if (text === undefined) {
        throw new RedflowError({
          code: ErrorCode.MODEL_SCRIPT_EXHAUSTED,
          message:
            `the scripted model has ${texts.length} answer${texts.length === 1 ? '' : 's'} ` +
            `but was asked for iteration ${String(iteration)}`,
          hint:
            'Add an answer for every iteration the run needs (the last one usually has "action": "final"), ' +
            'or lower the agent core\'s maxIterations.',
        });
      }
      if (delayMs > 0) {
        try {
          await sleep(delayMs, signal);
        } catch (error) {
          if (signal.aborted) throw abortError(signal, 'the scripted model call');
          throw error;
        }
        if (signal.aborted) throw abortError(signal, 'the scripted model call');
      }
      // Nothing is streamed: the live view gets the answer's text (its message) as one piece.
      if (call?.onChunk !== undefined) {
        const extractor = (await import('./answerText.js')).createAnswerTextExtractor();
        const shown = extractor.push(text) + extractor.flush();
        if (shown !== '') deliverChunk(call.onChunk, { text: shown, attempt: 1 });
      }
      return { text, attempts: 1 };
    },
  };
}

/** The scripted verifier's answer for the answer of `iteration`, or MODEL_SCRIPT_EXHAUSTED saying how to script it. */
function verificationAnswer(verifications: ReadonlyMap<number, string>, iteration: number): ModelAnswer {
  const text = verifications.get(iteration);
  if (text === undefined) {
    throw new RedflowError({
      code: ErrorCode.MODEL_SCRIPT_EXHAUSTED,
      message: `the scripted model has no verification for the answer of iteration ${String(iteration)}`,
      hint: 'Give the scripted model a verification for each final answer the agent verifies: createScriptedModel(answers, { verifications: { [iteration]: { checks: [...] } } })',
    });
  }
  return { text, attempts: 1 };
}
