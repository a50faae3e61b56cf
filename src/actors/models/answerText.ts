import { JSONParser } from '@streamparser/json';
import { createReasoningFilter } from './reasoningFilter.js';

/**
 * Turns the pieces of a streamed answer into the pieces of its text for people to read: the
 * `message` of a final answer as it arrives, never the protocol's JSON around it.
 *
 * - An answer whose first non-blank character is `{` is read with an incremental JSON reader
 *   (`@streamparser/json`): the top-level `message` (or the `decision` wrapper's, when the provider
 *   was held to the decision schema) is shown as its characters come, its escapes
 *   decoded (`\n`, `\"`, `\u0041` come out as the characters they spell, even when cut across
 *   pieces), and only once its `action` is known to be `final`. Any other decision (a tool
 *   call, a question, a delegation) shows nothing; an answer that stops being JSON shows nothing more.
 * - Any other answer (plain text, e.g. a model that calls tools natively) passes through unchanged,
 *   less its reasoning (`Thought:` and `Reflection:` sections, see `createReasoningFilter`), as the
 *   log leaves it out.
 */
export interface AnswerTextExtractor {
  /** Takes the next piece of the answer; returns the text to show now (possibly `''`). */
  push(piece: string): string;
  /** Returns what is held back, once the answer is complete. */
  flush(): string;
}

/** A high surrogate ends the piece: its pair comes with the next one, and the reader takes whole characters. */
function endsInHighSurrogate(text: string): boolean {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff;
}

/** The JSON side: `message` is held until `action` says the answer is final, then shown as it grows. */
function jsonAnswerText(): AnswerTextExtractor {
  // At the top, or inside the `decision` wrapper of a provider-constrained answer (decisionSchema.ts).
  const parser = new JSONParser({
    paths: ['$.action', '$.message', '$.decision.action', '$.decision.message'],
    keepStack: false,
    emitPartialTokens: true,
    emitPartialValues: true,
  });
  // Index 0: the answer's own members; 1: its `decision` wrapper's. The top's win when it has them.
  const action: unknown[] = [undefined, undefined];
  const message = ['', ''];
  const messageDone = [false, false];
  let shown = 0;
  let broken = false;
  parser.onValue = ({ value, key, partial, stack }) => {
    const at = stack.length > 1 ? 1 : 0;
    if (key === 'action' && partial !== true && action[at] === undefined) action[at] = value;
    if (key !== 'message' || messageDone[at] || typeof value !== 'string') return;
    message[at] = value;
    if (partial !== true) messageDone[at] = true;
  };
  // A broken answer (or anything after the object's end) shows nothing more: the log has it whole.
  parser.onError = () => {
    broken = true;
  };
  return {
    push(piece) {
      if (!broken && !parser.isEnded) parser.write(piece);
      const at = action[0] !== undefined ? 0 : 1;
      const text = message[at] as string;
      if (action[at] !== 'final' || text.length <= shown) return '';
      const more = text.slice(shown);
      shown = text.length;
      return more;
    },
    // The message is shown as it grows: nothing is ever held back.
    flush: () => '',
  };
}

/**
 * A new {@link AnswerTextExtractor}, one per answer (a retried attempt starts a new one).
 *
 * @example
 * ```ts
 * const text = createAnswerTextExtractor();
 * text.push('{"action":"final","mess'); // ''
 * text.push('age":"Shipped \\u0041-1"}'); // 'Shipped A-1'
 * text.flush(); // ''
 * ```
 */
export function createAnswerTextExtractor(): AnswerTextExtractor {
  let side: AnswerTextExtractor | undefined;
  let held = '';
  return {
    push(piece) {
      let text = held + piece;
      held = '';
      if (endsInHighSurrogate(text)) {
        held = text.slice(-1);
        text = text.slice(0, -1);
      }
      if (side === undefined) {
        const start = text.trimStart();
        // Only blanks so far: what the answer is is not known yet.
        if (start === '') {
          held = text + held;
          return '';
        }
        side = start.startsWith('{') ? jsonAnswerText() : createReasoningFilter();
      }
      return side.push(text);
    },
    flush() {
      const rest = held;
      held = '';
      // An answer of blanks only is shown as it came.
      if (side === undefined) return rest;
      return side.push(rest) + side.flush();
    },
  };
}
