/**
 * Keeps a model's reasoning (its `thought` and `reflection`) out of the live pieces of its answer,
 * as the log keeps it out of the recorded answer: piece by piece, however the stream is split.
 *
 * - An answer that opens with `{` is read as JSON as it comes: a top-level member whose key is
 *   `thought` or `reflection` (escapes in the key decoded, as a parser would) is left out whole,
 *   key, value and the comma after it.
 * - Any other answer is read as the text ReAct form, line by line: from a line labelled
 *   `Thought:` or `Reflection:` up to the next labelled line (`Action:`, `Final Answer:`, …)
 *   nothing is shown. A line is held until its label can be told (a newline, or enough characters).
 */
export interface ReasoningFilter {
  /** Takes the next piece; returns what may be shown of it (possibly `''`). */
  push(piece: string): string;
  /** Returns what is held back, once the answer is complete. */
  flush(): string;
}

const HIDDEN: ReadonlySet<string> = new Set(['thought', 'reflection']);
/** A label at the start of a line of the text form: `Thought:`, `Final Answer:`, … */
const LABEL = /^\s*([A-Za-z][A-Za-z ]{0,24}):/;
/** Characters after which a line without a colon cannot be a label any more. */
const LABEL_WINDOW = 32;

/** The key a JSON string literal spells (`"th\u006fught"` is `thought`), or undefined when it does not parse. */
function keyOf(literal: string): string | undefined {
  try {
    const key: unknown = JSON.parse(literal);
    return typeof key === 'string' ? key.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON side: a small lexer that knows where the top-level members are. */
function jsonFilter(): ReasoningFilter {
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** A top-level key being read: held until it ends, when it is known whether to show its member. */
  let key: string | undefined;
  /** From a top-level key to the end of its value (the comma after it, or the closing brace). */
  let member: 'show' | 'hide' | undefined;

  const step = (c: string): string => {
    if (key !== undefined) {
      key += c;
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') {
        inString = false;
        const literal = key;
        key = undefined;
        member = HIDDEN.has(keyOf(literal) ?? '') ? 'hide' : 'show';
        return member === 'hide' ? '' : literal;
      }
      return '';
    }
    const shown = member === 'hide' ? '' : c;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      return shown;
    }
    switch (c) {
      case '"':
        inString = true;
        // A string at the top level where a key is expected: read it before showing anything.
        if (depth === 1 && member === undefined) {
          key = c;
          return '';
        }
        return shown;
      case '{':
      case '[':
        depth += 1;
        return shown;
      case '}':
      case ']':
        depth -= 1;
        if (depth > 0) return shown;
        // The object closes: a hidden last member ends here, and the brace is shown.
        member = undefined;
        return c;
      case ',':
        if (depth !== 1) return shown;
        // A member ends; a hidden one takes its comma with it.
        member = undefined;
        return shown;
      default:
        return shown;
    }
  };

  return {
    push(piece) {
      let out = '';
      for (const c of piece) out += step(c);
      return out;
    },
    flush() {
      // A key cut off by the end of the answer is shown only when it cannot be a hidden one.
      const rest = key !== undefined && !HIDDEN.has(keyOf(`${key}"`) ?? '') ? key : '';
      key = undefined;
      return rest;
    },
  };
}

/** The text side: lines of the ReAct text form, each shown or not by the last label. */
function textFilter(): ReasoningFilter {
  let line = '';
  let hiding = false;
  /** Whether the current line's label (or its lack of one) is known yet. */
  let decided = false;

  const decide = (): void => {
    const label = LABEL.exec(line)?.[1];
    if (label !== undefined) hiding = HIDDEN.has(label.trim().toLowerCase());
    decided = true;
  };
  return {
    push(piece) {
      let out = '';
      for (const c of piece) {
        if (decided) {
          if (!hiding) out += c;
          if (c === '\n') {
            decided = false;
            line = '';
          }
          continue;
        }
        line += c;
        if (c === '\n' || LABEL.test(line) || line.length >= LABEL_WINDOW) {
          decide();
          if (!hiding) out += line;
          if (c === '\n') {
            decided = false;
            line = '';
          }
        }
      }
      return out;
    },
    flush() {
      if (decided || line === '') return '';
      decide();
      return hiding ? '' : line;
    },
  };
}

/**
 * A new {@link ReasoningFilter} for one answer: JSON or text, told by its first character that is
 * not whitespace (held until it comes).
 *
 * @example
 * ```ts
 * const filter = createReasoningFilter();
 * filter.push('{"thought":"the user is ang'); // '{'
 * filter.push('ry","action":"final"}');       // '"action":"final"}'
 * ```
 */
export function createReasoningFilter(): ReasoningFilter {
  let chosen: ReasoningFilter | undefined;
  let lead = '';
  return {
    push(piece) {
      if (chosen !== undefined) return chosen.push(piece);
      const start = piece.search(/\S/);
      if (start < 0) {
        lead += piece;
        return '';
      }
      chosen = piece[start] === '{' ? jsonFilter() : textFilter();
      const held = lead;
      lead = '';
      return chosen.push(held + piece);
    },
    flush() {
      if (chosen !== undefined) return chosen.flush();
      // An answer of whitespace only: nothing in it is reasoning, and the log keeps it as it came.
      const held = lead;
      lead = '';
      return held;
    },
  };
}
