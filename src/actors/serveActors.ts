import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import type { MemoryRecord, MemoryStore } from './memory.js';
import type { ModelActor, ModelAnswer, ModelRequest } from './model.js';
import { Subject } from './subjects.js';
import type { ToolDefinition, ToolRequest, ToolResult } from './tool.js';
import type { Subscription, Transport } from './transport.js';

/** Largest tool output (as JSON) kept as an observation. */
export const MAX_TOOL_OUTPUT_CHARS = 1_000_000;

/**
 * Serves a model actor on `subject`: each request is one `complete` call; its errors travel back
 * as data.
 *
 * @example
 * ```ts
 * serveModel(transport, Subject.model('redflow', 'llm1'), createScriptedModel([...]));
 * ```
 */
export function serveModel(transport: Transport, subject: string, model: ModelActor): Subscription {
  return transport.serve<ModelRequest, ModelAnswer>(subject, (request, context) => model.complete(request, context.signal));
}

/**
 * Serves a tool on `subject`. A tool that throws, or returns something that is not JSON, answers
 * `{ ok: false, error }`: the core records it as the observation and the loop goes on (seed 004).
 *
 * @example
 * ```ts
 * serveTool(transport, Subject.tool('redflow', 'add'), addTool);
 * ```
 */
export function serveTool(transport: Transport, subject: string, tool: ToolDefinition): Subscription {
  return transport.serve<ToolRequest, ToolResult>(subject, async (request, context) => {
    try {
      const output = await tool.execute(request.input, {
        signal: context.signal,
        idempotencyKey: request.idempotencyKey,
        traceId: request.traceId,
        iteration: request.iteration,
      });
      return { ok: true, output: asJson(output, tool.name) };
    } catch (error) {
      return { ok: false, error: toErrorInfo(error, ErrorCode.TOOL_FAILED) };
    }
  });
}

/** Serves a memory store on the load and save subjects of memory node `memoryId`. */
export function serveMemory(transport: Transport, prefix: string, memoryId: string, store: MemoryStore): Subscription {
  const load = transport.serve<{ conversationId: string }, MemoryRecord | null>(
    Subject.memoryLoad(prefix, memoryId),
    async ({ conversationId }) => (await store.load(conversationId)) ?? null,
  );
  const save = transport.serve<{ conversationId: string; memory: MemoryRecord }, boolean>(
    Subject.memorySave(prefix, memoryId),
    async ({ conversationId, memory }) => {
      await store.save(conversationId, memory);
      return true;
    },
  );
  return {
    unsubscribe() {
      load.unsubscribe();
      save.unsubscribe();
    },
  };
}

/** The output as plain JSON data (what the log can hold), or a clear error. */
function asJson(output: unknown, toolName: string): unknown {
  if (output === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(output);
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_FAILED, `tool "${toolName}" returned a value that is not JSON: ${(error as Error).message}`, {
        hint: 'return plain objects, arrays, strings, numbers, booleans or null',
      }),
    );
  }
  if (text === undefined) return null;
  if (text.length > MAX_TOOL_OUTPUT_CHARS) {
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_RESPONSE_TOO_LARGE, `tool "${toolName}" returned ${text.length} characters of JSON; the limit is ${MAX_TOOL_OUTPUT_CHARS}`),
    );
  }
  // Plain objects pass through; anything else (Dates, class instances, -0, NaN) becomes what the log will hold.
  return JSON.parse(text) as unknown;
}
