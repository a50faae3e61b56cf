import type { WaitAnswer } from '../events/pendingWait.js';
import { requestRunAnswer, type RunAnswerReply } from '../nats/cluster/runAnswers.js';
import { connectFromOptions, subjectPrefix } from './natsOptions.js';
import { stopWithin } from './stopWithin.js';

/**
 * `redflow approve|deny|tool-result <traceId> --nats <url>`: gives a run parked on the cluster its
 * answer; one core worker takes it and resumes the run. Refusals are thrown with their codes.
 */
export async function answerOnCluster(
  values: Record<string, string | boolean | undefined>,
  traceId: string,
  answer: Exclude<WaitAnswer, { kind: 'expire' }>,
): Promise<RunAnswerReply> {
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-answer');
  try {
    return await requestRunAnswer(nc, prefix, traceId, answer);
  } finally {
    await stopWithin([], nc);
  }
}
