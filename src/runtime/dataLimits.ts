import type { MemoryRecord } from '../actors/memory.js';
import type { ToolResult } from '../actors/tool.js';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import { jsonLimitBreach, type JsonLimitBreach } from '../validation/jsonValueLimits.js';
import { defaultAnswerLimits, type AnswerLimits } from '../validation/validateModelAnswer.js';

// Data that enters a run from outside the model (its input, a tool's reply, the conversation's
// memory) gets the limits a model's answer gets: the prompt builder and the log write it out
// recursively, so deeper data would overflow their stack and crash the process.

/**
 * Refuses a run's input that breaks the limits, with `RUN_INPUT_TOO_DEEP` or `RUN_INPUT_TOO_LARGE`.
 * Call it before anything of the run exists (its log, its record on a cluster).
 *
 * @throws RedflowError when the input is too deep or too large.
 * @example
 * ```ts
 * checkRunInput(request.input); // throws RUN_INPUT_TOO_DEEP for 10,000 nested arrays
 * ```
 */
export function checkRunInput(input: unknown, limits: AnswerLimits = defaultAnswerLimits): void {
  const breach = jsonLimitBreach(input, limits);
  if (breach === undefined) return;
  throw new RedflowError(
    breach.kind === 'depth'
      ? errorInfo(ErrorCode.RUN_INPUT_TOO_DEEP, `the input nests objects or arrays deeper than ${breach.maxDepth} levels`, {
          hint: `flatten the input: a run takes at most ${breach.maxDepth} levels of nesting, as a model's answer`,
        })
      : errorInfo(ErrorCode.RUN_INPUT_TOO_LARGE, `the input is longer than ${breach.maxChars} characters as JSON`, {
          hint: 'send a smaller input (a reference to large data, not the data itself)',
        }),
  );
}

/**
 * A tool's reply as the core records it: one that breaks the limits becomes a failed call
 * (`TOOL_OUTPUT_TOO_DEEP`, or `TOOL_RESPONSE_TOO_LARGE`), the observation the model sees next,
 * and the run goes on. Anything else is returned as it is.
 *
 * @example
 * ```ts
 * limitToolResult({ ok: true, output: deep }, 'lookup'); // { ok: false, error: { code: 'TOOL_OUTPUT_TOO_DEEP', … } }
 * ```
 */
export function limitToolResult(result: ToolResult, tool: string, limits: AnswerLimits = defaultAnswerLimits): ToolResult {
  const breach = jsonLimitBreach(result, limits);
  if (breach === undefined) return result;
  return { ok: false, error: toolBreach(breach, tool) };
}

function toolBreach(breach: JsonLimitBreach, tool: string): ErrorInfo {
  return breach.kind === 'depth'
    ? errorInfo(ErrorCode.TOOL_OUTPUT_TOO_DEEP, `tool "${tool}" replied with data nested deeper than ${breach.maxDepth} levels`, {
        hint: `make the tool return flatter data (at most ${breach.maxDepth} levels of objects and arrays)`,
      })
    : errorInfo(ErrorCode.TOOL_RESPONSE_TOO_LARGE, `tool "${tool}" replied with more than ${breach.maxChars} characters of JSON`, {
        hint: 'make the tool return less (a summary, a page of results)',
      });
}

/**
 * Refuses a conversation's memory record that breaks the limits, with `MEMORY_RECORD_TOO_DEEP` or
 * `MEMORY_RECORD_TOO_LARGE`: the run does not start with it.
 *
 * @throws RedflowError when the record is too deep or too large.
 * @example
 * ```ts
 * checkMemoryRecord(record, 'conv-1');
 * ```
 */
export function checkMemoryRecord(record: MemoryRecord | null | undefined, conversationId: string, limits: AnswerLimits = defaultAnswerLimits): void {
  const breach = jsonLimitBreach(record, limits);
  if (breach === undefined) return;
  const hint = 'fix or delete the conversation\'s stored memory; the conversation then starts without memory';
  throw new RedflowError(
    breach.kind === 'depth'
      ? errorInfo(ErrorCode.MEMORY_RECORD_TOO_DEEP, `the memory of conversation "${conversationId}" nests deeper than ${breach.maxDepth} levels`, { hint })
      : errorInfo(ErrorCode.MEMORY_RECORD_TOO_LARGE, `the memory of conversation "${conversationId}" is longer than ${breach.maxChars} characters as JSON`, { hint }),
  );
}
