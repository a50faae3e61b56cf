import type { ErrorObject } from 'ajv';
import type { ModelResponse } from '../contracts/schema-types.js';
import type { ErrorInfo } from '../errors.js';
import type { ToolSignature } from './actionSyntax.js';

// The rules and verdicts of a model answer's validation: its types, apart from the code that applies them.

/** Size and depth limits applied to a model's answer before it is parsed. */
export interface AnswerLimits {
  /** Longest answer accepted, in UTF-16 code units (default 1,000,000). */
  readonly maxChars: number;
  /** Deepest nesting of objects and arrays accepted (default 64). */
  readonly maxDepth: number;
}

/** A compiled schema check: ajv's validate function shape. */
export interface SchemaCheck {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * Everything the validation of one answer needs, compiled once per run: the model-response schema,
 * the allowed tools and each tool's input check. Pure data and functions: no I/O.
 */
export interface AnswerRules {
  readonly limits: AnswerLimits;
  readonly responseSchema: SchemaCheck;
  readonly allowedTools: ReadonlySet<string>;
  /** Returns `true` or what is wrong with the input; absent for a tool with no schema. */
  readonly toolInput: ReadonlyMap<string, (input: unknown) => true | string>;
  /** When set, an answer that is not JSON is read in the text ReAct form (`Action: name(…)`). */
  readonly textActions?: TextActionRules;
  /** The agent's reasoning is "explicit": an answer must give its thought, and after an observation its reflection and decision. */
  readonly explicitReasoning?: boolean;
  /** The agent's outputSchema, compiled: `true`, or what is wrong with a final answer's output. */
  readonly outputCheck?: (output: unknown) => true | readonly string[];
}

/** Where in the run the answer comes: what the checks that depend on it need. */
export interface AnswerPosition {
  /** The answer follows an observation (a tool's result, a denial, a person's answer): every iteration but the first. */
  readonly afterObservation?: boolean;
  /**
   * The answer is the logged one, whose thought and reflection were taken out (`thoughtHidden`):
   * it had them, since it was valid when received.
   */
  readonly reasoningHidden?: boolean;
}

/** A final answer's structured output and, when the agent has an outputSchema, what is wrong with it. */
export interface OutputVerdict {
  /** The output: the answer's `output`, else its message read as JSON when it is an object or array, else the message. */
  readonly value: unknown;
  /** What does not match the outputSchema; absent when it matches (or there is none). */
  readonly errors?: readonly string[];
}

/** The outcome of validating one answer. */
export type AnswerValidation =
  | { readonly ok: true; readonly answer: ModelResponse; readonly output?: OutputVerdict }
  | { readonly ok: false; readonly error: ErrorInfo };

/**
 * Answers in the text ReAct form are accepted besides JSON (the step service's sessions, whose
 * tools are described in prose): the tools a prose list declares, so positional arguments get names.
 */
export interface TextActionRules {
  readonly signatures: readonly ToolSignature[];
}
