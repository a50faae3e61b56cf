import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import type { GivenAnswer, RunWait } from '../events/pendingWait.js';

/**
 * What an AG-UI `RunAgentInput` asks of a flow, read from the fields Redflow takes: a new run from
 * the last user message, or the answer to the wait of a run it started (a resume entry answering
 * an interrupt, or a tool message with the result of a frontend tool call).
 */

/** The part of a (schema-checked) RunAgentInput this reads. */
export interface AguiRunInput {
  readonly threadId: string;
  readonly runId: string;
  readonly messages: readonly { readonly role: string; readonly content?: unknown; readonly toolCallId?: string; readonly error?: string }[];
  readonly resume?: readonly { readonly interruptId: string; readonly status: 'resolved' | 'cancelled'; readonly payload?: unknown }[];
  readonly forwardedProps?: unknown;
}

/** What the input asks for. */
export type AguiRequest =
  | { readonly kind: 'start'; readonly input: string }
  | { readonly kind: 'answer'; readonly traceId: string; readonly key: string; readonly answer: (wait: RunWait | undefined) => GivenAnswer | { readonly kind: 'abort'; readonly reason: string } };

/** A wait's key (an interrupt's id, a frontend tool call's id): `<traceId>:<iteration>`. */
const WAIT_KEY = /^([A-Za-z0-9_-]{1,128}):(\d{1,9})$/;

/**
 * Reads what `input` asks for. Resume entries come first (AG-UI's answer to an interrupt), then a
 * last message from a tool (a frontend tool's result), else the last user message starts a run.
 *
 * @throws ApiError AGUI_INPUT_INVALID when it asks for nothing Redflow can do.
 *
 * @example
 * ```ts
 * readAguiRequest({ threadId: 't', runId: 'r', messages: [{ role: 'user', content: 'Where is my order?' }] });
 * // { kind: 'start', input: 'Where is my order?' }
 * ```
 */
export function readAguiRequest(input: AguiRunInput): AguiRequest {
  const resume = input.resume ?? [];
  if (resume.length > 1) throw invalid(`${resume.length} resume entries: a Redflow run waits for one answer at a time`, 'answer the one interrupt the last RUN_FINISHED named');
  const entry = resume[0];
  if (entry !== undefined) {
    const traceId = traceOfKey(entry.interruptId, 'resume[0].interruptId');
    return {
      kind: 'answer',
      traceId,
      key: entry.interruptId,
      answer: (wait) => answerOfResume(entry, wait),
    };
  }
  const last = input.messages.at(-1);
  if (last?.role === 'tool') {
    const key = last.toolCallId ?? '';
    const traceId = traceOfKey(key, 'the last message\'s toolCallId');
    const result =
      last.error !== undefined
        ? { ok: false as const, error: errorInfo(ErrorCode.TOOL_FAILED, last.error) }
        : { ok: true as const, output: outputOf(textOf(last.content)) };
    return { kind: 'answer', traceId, key, answer: () => ({ kind: 'client', idempotencyKey: key, result }) };
  }
  const user = [...input.messages].reverse().find((message) => message.role === 'user');
  const text = user === undefined ? '' : textOf(user.content);
  if (text.trim() === '') throw invalid('the input has no user message with text to start a run from', 'end messages with { role: "user", content: "…" }, or answer the interrupt with resume');
  return { kind: 'start', input: text };
}

/** True unless the input's `forwardedProps.redflow.keepRunning` is true: a client that leaves aborts its run. */
export function abortsOnDisconnect(input: Pick<AguiRunInput, 'forwardedProps'>): boolean {
  const props = input.forwardedProps as { redflow?: { keepRunning?: unknown } } | undefined;
  return props?.redflow?.keepRunning !== true;
}

function answerOfResume(entry: NonNullable<AguiRunInput['resume']>[number], wait: RunWait | undefined): GivenAnswer | { kind: 'abort'; reason: string } {
  const target = { idempotencyKey: entry.interruptId };
  if (wait?.kind === 'human') {
    if (entry.status === 'cancelled') return { kind: 'abort', reason: 'the question was cancelled in the frontend' };
    const payload = entry.payload as { text?: unknown } | string | undefined;
    const text = typeof payload === 'string' ? payload : payload?.text;
    if (typeof text !== 'string') throw invalid('the answer to a question needs a payload with its text', 'resume with { interruptId, status: "resolved", payload: { text: "…" } }');
    return { kind: 'human', text, ...target };
  }
  // An approval (or no wait at all, which the run refuses with RUN_NOT_WAITING as it judges the answer).
  if (entry.status === 'cancelled') return { kind: 'approval', approved: false, reason: 'cancelled in the frontend', ...target };
  const payload = entry.payload as { approved?: unknown; reason?: unknown } | boolean | undefined;
  const approved = typeof payload === 'boolean' ? payload : payload?.approved;
  if (typeof approved !== 'boolean') throw invalid('the answer to an approval needs a payload saying whether it is approved', 'resume with { interruptId, status: "resolved", payload: { approved: true } }');
  const reason = typeof payload === 'object' && typeof payload.reason === 'string' ? payload.reason : undefined;
  return { kind: 'approval', approved, ...(reason !== undefined && { reason }), ...target };
}

function traceOfKey(key: string, where: string): string {
  const match = WAIT_KEY.exec(key);
  if (match?.[1] === undefined) throw invalid(`${where} ${JSON.stringify(key.slice(0, 140))} names no wait of a Redflow run`, 'use the id the interrupt or the tool call came with: "<traceId>:<iteration>"');
  return match[1];
}

/** A message's text: a string, or its text parts joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: unknown; text?: unknown }) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** A frontend tool's output: its JSON when the content is JSON, else the text. */
function outputOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The 400 of an input Redflow cannot take. */
export function invalid(message: string, hint: string): ApiError {
  return new ApiError(errorInfo(ErrorCode.AGUI_INPUT_INVALID, message, { hint }));
}
