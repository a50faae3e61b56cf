import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import { compileUserSchema } from '../contracts/schemas.js';
import type { MemoryRecord, MemoryStore } from '../actors/memory.js';
import { appendTurn } from '../actors/memory/conversationMemory.js';
import type { MemoryAppendRequest } from '../machines/protocol.js';
import type { ModelActor, ModelAnswer, ModelRequest } from '../actors/model.js';
import { Subject, isSubjectToken } from '../actors/subjects.js';
import type { ToolContext, ToolDefinition, ToolProgress, ToolRequest, ToolResult } from '../actors/tool.js';
import type { Headers, Subscription, Transport } from '../actors/transport.js';
import { redactSecretsInData } from '../secrets/secrets.js';
import { defaultAnswerLimits } from '../validation/validateModelAnswer.js';
import { traceModelCall, traceToolCall } from '../telemetry/tracedCalls.js';

/** Largest tool output (as JSON) kept as an observation: the limit of a model's answer, as the core checks it too. */
export const MAX_TOOL_OUTPUT_CHARS = defaultAnswerLimits.maxChars;

/** Options of {@link serveModel}. */
export interface ServeModelOptions {
  /**
   * Publish each piece of every answer, as the model streams it, on
   * `<chunkPrefix>.runs.chunk.<traceId>` ({@link Subject.runChunk}) as a {@link RunChunk}: the live
   * view of a run's answers: their text only, as the model gives it to `onChunk` (a final answer's
   * message, never its thought or reflection). The log still records each answer once, whole.
   */
  readonly chunkPrefix?: string;
}

/** One piece of a model's answer, published live on {@link Subject.runChunk} (never logged). */
export interface RunChunk {
  readonly traceId: string;
  /** The iteration whose model call this answer is. */
  readonly iteration: number;
  /** The model call's attempt, from 1: pieces of an earlier attempt are void once a later one starts. */
  readonly attempt: number;
  readonly text: string;
}

/**
 * A word from a tool call in flight, published live on {@link Subject.runChunk} next to the answers'
 * pieces: how far it is (`progress`, shown as activity, never logged), or where its work lives
 * (`attached`, which the run's transport actor has the log record as `tool.attached`).
 */
export interface RunToolUpdate {
  readonly traceId: string;
  readonly iteration: number;
  /** The call's idempotency key: the activity's tool call id. */
  readonly toolCallId: string;
  readonly progress?: ToolProgress;
  readonly attached?: Readonly<Record<string, string>>;
}

/** What a run's live subject carries: a piece of an answer, or a word from a tool call. */
export type RunLiveMessage = RunChunk | RunToolUpdate;

/**
 * True when `message` (off {@link Subject.runChunk}) is a tool call's word, not a piece of an answer.
 *
 * @example
 * ```ts
 * transport.subscribe(Subject.runChunk('redflow', traceId), ({ data }) => { if (isToolUpdate(data as RunLiveMessage)) console.log('progress'); });
 * ```
 */
export function isToolUpdate(message: RunLiveMessage): message is RunToolUpdate {
  return typeof (message as RunToolUpdate).toolCallId === 'string';
}

/** Options of {@link serveTool}. */
export interface ServeToolOptions {
  /** Publish the calls' progress and attachments on `<livePrefix>.runs.chunk.<traceId>` ({@link RunToolUpdate}). */
  readonly livePrefix?: string;
}

/**
 * Serves a model actor on `subject`: each request is one `complete` call; its errors travel back
 * as data. A requester that gives up cancels the call (its signal aborts the model request).
 * With `chunkPrefix`, the answer's pieces are also published live as they stream.
 *
 * @example
 * ```ts
 * serveModel(transport, Subject.model('redflow', 'llm1'), createScriptedModel([...]), { chunkPrefix: 'redflow' });
 * ```
 */
export function serveModel(transport: Transport, subject: string, model: ModelActor, options: ServeModelOptions = {}): Subscription {
  const { chunkPrefix } = options;
  const complete = (request: ModelRequest, signal: AbortSignal): Promise<ModelAnswer> => {
    // A trace id that is not one subject token (only a forged request has one) gets no live view.
    if (chunkPrefix === undefined || !isSubjectToken(request.traceId)) return model.complete(request, signal);
    const chunkSubject = Subject.runChunk(chunkPrefix, request.traceId);
    const { traceId, iteration } = request;
    const publish = (attempt: number, text: string) => {
      if (text !== '') transport.publish(chunkSubject, { traceId, iteration, attempt, text } satisfies RunChunk);
    };
    // The pieces are the answer's text already (createAnswerTextExtractor, in the model): its
    // reasoning stays out of the live view as it stays out of the log.
    return model.complete(request, signal, { onChunk: ({ text, attempt }) => publish(attempt, text) });
  };
  return transport.serve<ModelRequest, ModelAnswer>(subject, (request, context) => {
    checkModelRequest(request, subject);
    return traceModelCall(subject, model, request, context.headers, () => complete(request, context.signal));
  }, { cancellable: true });
}

/**
 * Serves a tool on `subject`. A tool that throws, or returns something that is not JSON, answers
 * `{ ok: false, error }`: the core records it as the observation and the loop goes on (a tool's
 * failure never ends a run).
 * A requester that gives up (the run was aborted or timed out) aborts the tool's `context.signal`.
 *
 * @example
 * ```ts
 * serveTool(transport, Subject.tool('redflow', 'add'), addTool);
 * ```
 */
export function serveTool(transport: Transport, subject: string, tool: ToolDefinition, options: ServeToolOptions = {}): Subscription {
  const { livePrefix } = options;
  return transport.serve<ToolRequest, ToolResult>(subject, (request, context) => {
    checkToolRequest(tool, request, subject);
    return runTool(tool, request, context.signal, context.headers, liveUpdatesOf(transport, livePrefix, request));
  }, { cancellable: true });
}

/** What a call's `progress` and `attach` publish: a {@link RunToolUpdate} on the run's live subject. */
export type ToolUpdateSink = (update: Pick<RunToolUpdate, 'progress' | 'attached'>) => void;

/**
 * Where a served call's progress and attachment go: the run's live subject on `livePrefix`, or
 * nowhere (undefined) without a prefix. A trace id that is not one subject token (only a forged
 * request has one) gets no live view.
 *
 * @example
 * ```ts
 * const live = liveUpdatesOf(transport, 'redflow', request);
 * const result = await runTool(tool, request, signal, headers, live);
 * ```
 */
export function liveUpdatesOf(transport: Transport, livePrefix: string | undefined, request: ToolRequest): ToolUpdateSink | undefined {
  if (livePrefix === undefined || !isSubjectToken(request.traceId)) return undefined;
  const subject = Subject.runChunk(livePrefix, request.traceId);
  const { traceId, iteration, idempotencyKey: toolCallId } = request;
  return (update) => transport.publish(subject, { traceId, iteration, toolCallId, ...update } satisfies RunToolUpdate);
}

/**
 * Refuses what the core would never send: a request that is not a tool request for this tool,
 * or whose input does not match the tool's schema (the core checked it; a message from elsewhere
 * may not have been). Throws, so the requester gets an error reply, not an observation.
 */
export function checkToolRequest(tool: ToolDefinition, request: unknown, subject: string): asserts request is ToolRequest {
  const bad = (why: string) =>
    new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `not a request for tool "${tool.name}" on ${subject}: ${why}`, {
        hint: 'send {"traceId", "iteration", "tool", "input", "idempotencyKey"}',
      }),
    );
  if (typeof request !== 'object' || request === null || Array.isArray(request)) throw bad('not a JSON object');
  const { tool: name, input, idempotencyKey, traceId, iteration } = request as Record<string, unknown>;
  if (name !== tool.name) throw bad(`it names the tool ${JSON.stringify(name)}`);
  if (typeof idempotencyKey !== 'string' || typeof traceId !== 'string') throw bad('no idempotencyKey or traceId');
  if (typeof iteration !== 'number' || !Number.isInteger(iteration) || iteration < 1) throw bad('no iteration');
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw bad('its input is not an object');
  const verdict = compileUserSchema(tool.inputSchema)(input);
  if (verdict !== true) {
    throw new RedflowError(errorInfo(ErrorCode.TOOL_INPUT_INVALID, `the input for "${tool.name}" does not match its schema: ${verdict}`));
  }
}

/** Refuses a model request that is not `{ traceId, iteration, messages: [{ role, content }] }`. */
function checkModelRequest(request: unknown, subject: string): asserts request is ModelRequest {
  const ok =
    typeof request === 'object' &&
    request !== null &&
    typeof (request as ModelRequest).traceId === 'string' &&
    Number.isInteger((request as ModelRequest).iteration) &&
    Array.isArray((request as ModelRequest).messages) &&
    (request as ModelRequest).messages.every(
      (m) => typeof m === 'object' && m !== null && typeof m.content === 'string' && ['system', 'user', 'assistant'].includes(m.role),
    );
  if (!ok) {
    throw new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `not a model request on ${subject}`, {
        hint: 'send {"traceId", "iteration", "messages": [{"role": "system"|"user"|"assistant", "content": string}]}',
      }),
    );
  }
}

/**
 * Runs one call of `tool` and returns its result as data, as {@link serveTool} answers it: a throw,
 * or an output that is not JSON (or too large), is `{ ok: false, error }`. Never rejects. Secrets
 * this process knows (a header the tool sent and the server echoed, an environment variable the
 * tool read) are redacted here, since on a cluster the core does not know them. With telemetry on,
 * the call is an `execute_tool` span, a child of the span the request's `headers` name
 * (`traceparent`).
 *
 * @example
 * ```ts
 * const result = await runTool(addTool, request, AbortSignal.timeout(5000)); // { ok: true, output: { sum: 3 } }
 * ```
 */
export function runTool(tool: ToolDefinition, request: ToolRequest, signal: AbortSignal, headers: Headers = {}, live?: ToolUpdateSink): Promise<ToolResult> {
  return traceToolCall(tool, request, headers, (traceparent) => executeTool(tool, request, signal, traceparent, live));
}

/** What the call is given besides its input: `live` (when someone listens) takes its progress and attachment. */
function contextOf(request: ToolRequest, signal: AbortSignal, traceparent: string | undefined, live: ToolUpdateSink | undefined): ToolContext {
  const context: { -readonly [K in keyof ToolContext]: ToolContext[K] } = { signal, idempotencyKey: request.idempotencyKey, traceId: request.traceId, iteration: request.iteration };
  if (traceparent !== undefined) context.traceparent = traceparent;
  if (request.attached !== undefined) context.attached = request.attached;
  if (live !== undefined) {
    context.progress = (progress) => {
      // A report after the call ended (a late notification) would show under the next call.
      if (!signal.aborted) live({ progress: redactSecretsInData(progress) as ToolProgress });
    };
    context.attach = (handle) => live({ attached: { ...handle } });
  }
  return context;
}

/** {@link runTool}'s call itself; `traceparent` is the call's trace context, handed to the tool. */
async function executeTool(tool: ToolDefinition, request: ToolRequest, signal: AbortSignal, traceparent: string | undefined, live: ToolUpdateSink | undefined): Promise<ToolResult> {
  try {
    const output = await tool.execute(request.input, contextOf(request, signal, traceparent, live));
    return { ok: true, output: redactSecretsInData(asJson(output, tool.name)) };
  } catch (error) {
    return { ok: false, error: redactSecretsInData(toErrorInfo(error, ErrorCode.TOOL_FAILED)) };
  }
}

export type { MemoryAppendRequest } from '../machines/protocol.js';

/** Serves a memory store on the load and append subjects of memory node `memoryId`. */
export function serveMemory(transport: Transport, prefix: string, memoryId: string, store: MemoryStore): Subscription {
  const load = transport.serve<{ conversationId: string }, MemoryRecord | null>(
    Subject.memoryLoad(prefix, memoryId),
    async ({ conversationId }) => (await store.load(conversationId)) ?? null,
  );
  // The turn is added to what is stored now, not to what the run loaded when it started: two runs
  // of one conversation that end together both keep their turn.
  const save = transport.serve<MemoryAppendRequest, boolean>(Subject.memoryAppend(prefix, memoryId), async ({ conversationId, turn, maxTurns }) => {
    try {
      await store.update(conversationId, (memory) => appendTurn(memory, turn, maxTurns));
    } catch (error) {
      // A store's own failure (a full disk, a lost connection) is the memory's, not the transport's.
      throw new RedflowError(toErrorInfo(error, ErrorCode.MEMORY_FAILED));
    }
    return true;
  });
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
