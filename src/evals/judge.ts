import { writeFile } from 'node:fs/promises';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import type { ChatMessage } from '../actors/model.js';
import { buildModel } from '../runtime/buildModel.js';
import type { JudgeExpectation } from './expectations.js';
import type { JudgeVerdict } from './scoreRun.js';

/** What a judge is asked about. */
export interface JudgeQuestion {
  /** The case's name, in the request's trace id and in errors. */
  readonly caseName: string;
  readonly input: unknown;
  readonly answer: string | undefined;
  /** The recorded run's answer, for reference. */
  readonly recordedAnswer: string | undefined;
}

/** Where and how a judge runs. */
export interface JudgeOptions {
  /** Where a scripted judge's `answersFile` is read from (the suite's folder). */
  readonly baseDir: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
  /** The file the judge's call is logged to (request, answer, verdict), as JSON. */
  readonly logFile?: string;
}

/** A judge's verdict with the tokens its call used. */
export interface JudgeResult extends JudgeVerdict {
  readonly tokens: number;
}

/** The messages a judge is sent: the rubric and the answer format, then the case. */
export function judgeMessages(judge: JudgeExpectation, question: JudgeQuestion): ChatMessage[] {
  return [
    {
      role: 'system',
      content: [
        'You grade the final answer of an AI agent against a rubric.',
        'Answer with JSON only: {"score": <a number from 0 to 1>, "reason": "<one sentence>"}.',
        '',
        'Rubric:',
        judge.rubric,
      ].join('\n'),
    },
    {
      role: 'user',
      content: [
        `Input: ${typeof question.input === 'string' ? question.input : JSON.stringify(question.input)}`,
        ...(question.recordedAnswer !== undefined ? [`Reference answer (from a recorded run): ${question.recordedAnswer}`] : []),
        `Answer to grade: ${question.answer ?? '(the run gave no final answer)'}`,
      ].join('\n'),
    },
  ];
}

/**
 * Asks a judge (a model built from a model node's settings, through the same model actors a run
 * uses: scripted, OpenAI-compatible, Anthropic) to grade an answer against its rubric. The call
 * (messages, answer, verdict or error) is written to `logFile` when one is given.
 *
 * @throws RedflowError the model's own errors (`MODEL_*`), or `EVAL_JUDGE_ANSWER_INVALID` when
 *   its answer is not `{"score": 0..1, "reason": "..."}`.
 *
 * @example
 * ```ts
 * const verdict = await judgeAnswer(
 *   { model: { provider: 'scripted', answers: [{ score: 1, reason: 'names the carrier' }] }, rubric: 'Names the carrier.' },
 *   { caseName: 'order-1', input: 'Where is A-1001?', answer: 'It ships with FastShip.', recordedAnswer: undefined },
 *   { baseDir: 'evals/orders' },
 * );
 * ```
 */
export async function judgeAnswer(judge: JudgeExpectation, question: JudgeQuestion, options: JudgeOptions): Promise<JudgeResult> {
  const messages = judgeMessages(judge, question);
  const started = Date.now();
  const record: Record<string, unknown> = {
    case: question.caseName,
    model: { provider: judge.model.provider ?? 'openai', ...(judge.model.model !== undefined && { model: judge.model.model }) },
    messages,
  };
  try {
    const model = await buildModel({ model: { nodeId: 'judge', config: judge.model }, baseDir: options.baseDir }, { env: options.env ?? process.env });
    const answer = await model.complete({ traceId: `judge-${question.caseName}`, iteration: 1, messages }, options.signal ?? new AbortController().signal);
    Object.assign(record, { answer: { text: answer.text, ...(answer.usage !== undefined && { usage: answer.usage }), attempts: answer.attempts } });
    const verdict = readVerdict(question.caseName, answer.text, judge.passScore ?? 0.5);
    Object.assign(record, { verdict, durationMs: Date.now() - started });
    return { ...verdict, tokens: answer.usage?.totalTokens ?? 0 };
  } catch (error) {
    Object.assign(record, { error: toErrorInfo(error, ErrorCode.EVAL_JUDGE_ANSWER_INVALID), durationMs: Date.now() - started });
    throw error;
  } finally {
    if (options.logFile !== undefined) await writeFile(options.logFile, `${JSON.stringify(record, null, 2)}\n`);
  }
}

/** The verdict in a judge's answer text: JSON (possibly fenced) with a `score` from 0 to 1. */
function readVerdict(caseName: string, text: string, passScore: number): JudgeVerdict {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  let parsed: unknown;
  try {
    parsed = json === undefined ? undefined : JSON.parse(json);
  } catch {
    parsed = undefined;
  }
  const score = (parsed as { score?: unknown } | undefined)?.score;
  if (typeof score !== 'number' || !(score >= 0 && score <= 1)) {
    throw new RedflowError(
      errorInfo(ErrorCode.EVAL_JUDGE_ANSWER_INVALID, `case "${caseName}": the judge did not answer {"score": 0..1, "reason": "..."}: ${JSON.stringify(text.slice(0, 200))}`, {
        hint: "use a model that follows the judge's answer format, or a clearer rubric",
      }),
    );
  }
  const reason = (parsed as { reason?: unknown }).reason;
  return { score, pass: score >= passScore, reason: typeof reason === 'string' ? reason : '' };
}
