/**
 * The text form of a ReAct answer, as models prompted with a tool list in prose write it:
 *
 * ```text
 * Thought: I need to search for the login code.
 * Action: code_search(query="authentication login", limit=5)
 * ```
 *
 * or `Final Answer: …` for a direct answer. This module only reads such text; it never decides what a
 * run does with it. Hand-written because the call syntax is a small, Python-like subset (named or
 * positional arguments, quoted strings with escapes, numbers, booleans, JSON arrays and objects)
 * that no maintained parser covers without taking a whole language grammar with it.
 */

/** A tool call read from the text. */
export interface TextToolCall {
  readonly kind: 'tool';
  readonly tool: string;
  readonly input: Record<string, unknown>;
  /** The action as the model wrote it, from `Action:` to the closing parenthesis. */
  readonly raw: string;
  readonly thought?: string;
}

/** A direct answer: a `Final Answer:` section, or text with no action in it. */
export interface TextFinalAnswer {
  readonly kind: 'final';
  readonly message: string;
  readonly thought?: string;
}

/** An `Action:` that could not be read: what was written and why it was not understood. */
export interface TextActionMalformed {
  readonly kind: 'malformed';
  readonly raw: string;
  readonly problem: string;
  readonly thought?: string;
}

/** What {@link parseTextAction} read. */
export type TextAction = TextToolCall | TextFinalAnswer | TextActionMalformed;

/** A tool as a prose tool list declares it: its name and the names of its parameters, in order. */
export interface ToolSignature {
  readonly name: string;
  readonly params: readonly string[];
  /** The line of the list that declares it, trimmed: the tool's description. */
  readonly line?: string;
}

const SECTION = /^[ \t]*(thought|action|action input|final answer)[ \t]*:/gim;
const IDENTIFIER = /^[A-Za-z_][\w.-]*/;

/**
 * Reads a model's answer written in the text ReAct form. A positional argument takes the name of the
 * declared parameter at its position (`signatures`, from {@link parseToolSignatures}); without a
 * declaration it is refused, since a tool's input is always named.
 *
 * @example
 * ```ts
 * parseTextAction('Thought: look it up\nAction: code_search(query="auth")');
 * // { kind: 'tool', tool: 'code_search', input: { query: 'auth' }, raw: 'Action: code_search(query="auth")', thought: 'look it up' }
 * ```
 */
export function parseTextAction(text: string, signatures: readonly ToolSignature[] = []): TextAction {
  const sections = splitSections(text);
  const thought = sections.get('thought')?.trim();
  const withThought = <T extends object>(value: T): T => (thought === undefined ? value : { ...value, thought });
  const action = sections.get('action');
  if (action !== undefined) {
    const raw = `Action: ${action.trim()}`;
    const actionInput = sections.get('action input');
    const call = actionInput === undefined ? readCall(action, signatures) : readNamedWithJsonInput(action, actionInput);
    if (typeof call === 'string') return withThought({ kind: 'malformed', raw, problem: call });
    const written = actionInput === undefined ? rawOf(call.length, action) : `${raw}\nAction Input: ${actionInput.trim()}`;
    return withThought({ kind: 'tool', tool: call.tool, input: call.input, raw: written });
  }
  const final = sections.get('final answer');
  if (final !== undefined) return withThought({ kind: 'final', message: final.trim() });
  // Only a thought: it is the answer, not reasoning beside one.
  if (thought !== undefined && sections.size === 1) return { kind: 'final', message: thought };
  return withThought({ kind: 'final', message: (sections.get('') ?? text).trim() });
}

/**
 * Where a line of a tool list stops declaring tools: an instruction about how to answer
 * (`Format: Action: tool_name(param="value")`, `Example: read_file(path="a.js")`, `e.g. …`). The
 * calls after it show the syntax with placeholders or sample values; they declare no tool, and
 * read as declarations they would offer the model a tool the client does not have.
 */
const INSTRUCTION = /\b(?:format|examples?|for example|usage|syntax|action|action input|final answer|thought|observation)\s*:|\be\.g\./i;

/**
 * The tools a prose tool list declares: every `name(param, other="example")` in it, but those in
 * an instruction (a line's text from `Format:`, `Example:`, `Action:`, `e.g.` … on: see
 * {@link INSTRUCTION}).
 *
 * @example
 * ```ts
 * parseToolSignatures('You have access to: code_search(query), read_file(path)\nFormat: Action: tool_name(param="value")');
 * // [{ name: 'code_search', params: ['query'], line: 'You have access to: …' }, { name: 'read_file', params: ['path'], line: … }]
 * ```
 */
export function parseToolSignatures(segment: string): ToolSignature[] {
  const found = new Map<string, ToolSignature>();
  for (const line of segment.split('\n')) {
    const declaring = line.slice(0, INSTRUCTION.exec(line)?.index ?? line.length);
    for (const match of declaring.matchAll(/([A-Za-z_][\w.-]*)\s*\(([^()]*)\)/g)) {
      const name = match[1] as string;
      if (found.has(name)) continue;
      const params: string[] = [];
      for (const part of splitTopLevel(match[2] as string)) {
        const param = IDENTIFIER.exec(part.trim())?.[0];
        if (param !== undefined) params.push(param);
      }
      found.set(name, { name, params, line: line.trim() });
    }
  }
  return [...found.values()];
}

/**
 * The answer without its `Thought:` sections (what a log keeps when thoughts are not to be
 * exposed); the text as it is when it has none.
 *
 * @example
 * ```ts
 * textWithoutThought('Thought: hmm\nAction: f(a=1)'); // 'Action: f(a=1)'
 * ```
 */
export function textWithoutThought(text: string): string {
  const marks = [...text.matchAll(SECTION)];
  if (!marks.some((mark) => (mark[1] as string).toLowerCase() === 'thought')) return text;
  let kept = text.slice(0, marks[0]?.index);
  marks.forEach((mark, i) => {
    if ((mark[1] as string).toLowerCase() === 'thought') return;
    kept += text.slice(mark.index, marks[i + 1]?.index ?? text.length);
  });
  return kept.trim();
}

/** The answer's labelled sections, by lower-case label; text before the first label under `''`. */
function splitSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  const marks = [...text.matchAll(SECTION)];
  const head = text.slice(0, marks[0]?.index ?? text.length);
  if (head.trim() !== '') sections.set('', head);
  marks.forEach((mark, i) => {
    const label = (mark[1] as string).toLowerCase().replace(/\s+/g, ' ');
    const start = (mark.index as number) + mark[0].length;
    const end = marks[i + 1]?.index ?? text.length;
    // The first of each label counts: a model that goes on to imagine the observation and a second
    // action has still proposed only the first.
    if (!sections.has(label)) sections.set(label, text.slice(start, end));
  });
  return sections;
}

/** `Action: ` and the call as written, without what followed its closing parenthesis. */
function rawOf(length: number, action: string): string {
  const leading = action.length - action.trimStart().length;
  return `Action: ${action.slice(leading, leading + length)}`;
}

interface ReadCall {
  readonly tool: string;
  readonly input: Record<string, unknown>;
  /** Characters of the trimmed action the call took. */
  readonly length: number;
}

/** `Action: name` with `Action Input: {json}` (the other common shape). */
function readNamedWithJsonInput(action: string, actionInput: string): ReadCall | string {
  const tool = action.trim();
  if (!IDENTIFIER.test(tool) || IDENTIFIER.exec(tool)?.[0] !== tool) return `"${tool.slice(0, 60)}" is not a tool name`;
  let input: unknown;
  try {
    input = JSON.parse(actionInput.trim());
  } catch {
    return 'the Action Input is not valid JSON';
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'the Action Input must be a JSON object';
  return { tool, input: input as Record<string, unknown>, length: tool.length };
}

/** `name(arg, key=value, …)`: the call at the start of the action. */
function readCall(action: string, signatures: readonly ToolSignature[]): ReadCall | string {
  const text = action.trimStart();
  const tool = IDENTIFIER.exec(text)?.[0];
  if (tool === undefined) return 'the action does not start with a tool name';
  const reader = new ArgumentReader(text, tool.length);
  reader.skipSpace();
  if (!reader.take('(')) {
    return reader.atEnd() ? 'the action has no argument list: write name(key="value")' : `expected "(" after ${tool}`;
  }
  const declared = signatures.find((signature) => signature.name === tool)?.params ?? [];
  const input: Record<string, unknown> = {};
  let position = 0;
  reader.skipSpace();
  if (reader.take(')')) return { tool, input, length: reader.offset };
  for (;;) {
    reader.skipSpace();
    const name = reader.keyword();
    let value: unknown;
    try {
      value = reader.value();
    } catch (error) {
      return (error as Error).message;
    }
    const key = name ?? declared[position];
    if (key === undefined) return `argument ${position + 1} of ${tool} has no name: write ${tool}(name=value)`;
    if (Object.hasOwn(input, key)) return `argument "${key}" is given twice`;
    input[key] = value;
    position += 1;
    reader.skipSpace();
    if (reader.take(')')) return { tool, input, length: reader.offset };
    if (!reader.take(',')) return reader.atEnd() ? `the argument list of ${tool} is not closed` : `expected "," or ")" in the arguments of ${tool}`;
  }
}

/** Splits `a, b="x, y", c` at top-level commas (not inside quotes or brackets). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '0': '\0', '\\': '\\', '"': '"', "'": "'", '/': '/' };
const LITERALS: Record<string, unknown> = { true: true, false: false, null: null, True: true, False: false, None: null };

/** Reads argument values from a call's text, left to right. */
class ArgumentReader {
  constructor(
    private readonly text: string,
    public offset: number,
  ) {}

  atEnd(): boolean {
    return this.offset >= this.text.length;
  }

  skipSpace(): void {
    while (/\s/.test(this.text[this.offset] ?? '')) this.offset += 1;
  }

  take(char: string): boolean {
    if (this.text[this.offset] !== char) return false;
    this.offset += 1;
    return true;
  }

  /** `name=` or `name:` before a value, consumed; `undefined` (nothing consumed) for a positional value. */
  keyword(): string | undefined {
    const match = /^([A-Za-z_]\w*)\s*[=:](?!=)\s*/.exec(this.text.slice(this.offset));
    if (match === null) return undefined;
    this.offset += match[0].length;
    return match[1];
  }

  value(): unknown {
    const c = this.text[this.offset];
    if (c === '"' || c === "'") return this.string(c);
    if (c === '[' || c === '{') return this.json();
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|True|False|None)(?![\w.])/.exec(this.text.slice(this.offset));
    if (literal === null) throw new Error(`cannot read the value at "${this.text.slice(this.offset, this.offset + 20)}": quote strings`);
    this.offset += literal[0].length;
    return literal[0] in LITERALS ? LITERALS[literal[0]] : Number(literal[0]);
  }

  private string(quote: string): string {
    this.offset += 1;
    let out = '';
    for (;;) {
      const c = this.text[this.offset];
      if (c === undefined) throw new Error('a quoted value is not closed');
      this.offset += 1;
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const next = this.text[this.offset];
      if (next === undefined) throw new Error('a quoted value is not closed');
      this.offset += 1;
      if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.offset, this.offset + 4))) {
        out += String.fromCharCode(parseInt(this.text.slice(this.offset, this.offset + 4), 16));
        this.offset += 4;
      } else out += ESCAPES[next] ?? `\\${next}`;
    }
  }

  /** A JSON array or object: its extent found by bracket matching, then parsed as JSON. */
  private json(): unknown {
    const start = this.offset;
    let depth = 0;
    let inString = false;
    for (; this.offset < this.text.length; this.offset += 1) {
      const c = this.text[this.offset];
      if (inString) {
        if (c === '\\') this.offset += 1;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '[' || c === '{') depth += 1;
      else if (c === ']' || c === '}') {
        depth -= 1;
        if (depth === 0) {
          this.offset += 1;
          try {
            return JSON.parse(this.text.slice(start, this.offset));
          } catch {
            throw new Error('an array or object argument is not valid JSON');
          }
        }
      }
    }
    throw new Error('an array or object argument is not closed');
  }
}
