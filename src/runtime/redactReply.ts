import type { Reply } from '../actors/transport.js';
import { redactSecretsInData } from '../secrets/secrets.js';

/** Cuts secrets out of an actor's reply before the core looks at it. */
export type ReplyRedactor = <T>(reply: Reply<T>) => Reply<T>;

/**
 * An actor's reply with every secret this process knows redacted (`[redacted]`): the model's
 * answer text, a tool's output, an error's message and hint. The transport actor applies it to
 * every reply before the statechart sees it, so what the log records and what the live run holds
 * are the same redacted data. The reply itself when nothing secret is in it.
 *
 * @example
 * ```ts
 * const answer = redactReply(await transport.request(subject, request, options));
 * ```
 */
export const redactReply: ReplyRedactor = (reply) => {
  if (reply.ok) {
    const data = redactSecretsInData(reply.data);
    return data === reply.data ? reply : { ok: true, data };
  }
  const error = redactSecretsInData(reply.error);
  return error === reply.error ? reply : { ok: false, error };
};
