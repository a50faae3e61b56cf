import type { Anthropic } from '@anthropic-ai/sdk';
import type * as AnthropicLibrary from '@anthropic-ai/sdk';
import type { TokenUsage } from '../../contracts/schema-types.js';
import type { ModelActor, ModelRequest } from '../model.js';
import { guardedFetch } from './guardedFetch.js';
import { clientsByKey, libraryClientOptions } from './libraryClients.js';
import { checkSettings } from './modelSettings.js';
import { ANTHROPIC_DEFAULTS, type AnthropicMessagesModelConfig } from './providerDefaults.js';
import { AnswerText, asRecord, isCount, protocolError, requireEventStream, streamEndedEarly } from './streamChecks.js';
import { createStreamingModel, type StreamedAnswer } from './streamingModel.js';
import type { DecisionContract } from '../model.js';
import type * as DecisionProtocolModule from './decisionProtocol.js';
import type { NativeCall } from './nativeTools.js';

/** How one request asks for its answer (see `decisionFormat` and `protocol`). */
type Shape = { readonly kind: 'forced' | 'tools'; readonly decision: DecisionContract; readonly protocol: DecisionProtocol } | { readonly kind: 'text' };

/** The decision's constrained output and native tools: loaded with the first request that carries a contract. */
type DecisionProtocol = typeof DecisionProtocolModule;

/** Loaded with the first request that carries a decision contract. */
let decisionProtocol: Promise<DecisionProtocol> | undefined;

/** The request fields of a {@link Shape}: the decision as the input of a tool the model must call, or the allowed tools. */
function shapeFields(shape: Shape): Record<string, unknown> {
  if (shape.kind === 'text') return {};
  const { DECISION_SCHEMA_NAME: name, decisionSchemaFor, nativeFunctionsFor } = shape.protocol;
  if (shape.kind === 'forced') {
    const tool = { name, description: 'Record your decision for this step.', input_schema: decisionSchemaFor(shape.decision).schema };
    return { tools: [tool], tool_choice: { type: 'tool', name } };
  }
  const tools = nativeFunctionsFor(shape.decision).map((fn) => ({ name: fn.name, description: fn.description, input_schema: fn.parameters }));
  return { tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } };
}

/** Loaded on the first call, so `import 'redflow'` and scripted runs never load the library. */
let library: Promise<typeof AnthropicLibrary> | undefined;

/**
 * The request's messages in the Messages API's shape: system messages joined into `system`, the
 * others in order (the API merges consecutive turns of one role).
 */
function messagesOf(request: ModelRequest): { system: string | undefined; messages: { role: 'user' | 'assistant'; content: string }[] } {
  const system: string[] = [];
  const messages: { role: 'user' | 'assistant'; content: string }[] = [];
  for (const { role, content } of request.messages) {
    if (role === 'system') system.push(content);
    else messages.push({ role, content });
  }
  return { system: system.length > 0 ? system.join('\n\n') : undefined, messages };
}

/** The tokens a usage object counts: input (cache writes and reads included) and output. */
function countTokens(usage: Record<string, unknown> | undefined, counted: { input?: number; output?: number }): void {
  if (usage === undefined) return;
  const { input_tokens: input, cache_creation_input_tokens: written, cache_read_input_tokens: read, output_tokens: output } = usage;
  if (isCount(input)) counted.input = input + (isCount(written) ? written : 0) + (isCount(read) ? read : 0);
  if (isCount(output)) counted.output = output;
}

/**
 * Reads a Messages stream (`message_start`, `content_block_start`/`_delta`/`_stop`,
 * `message_delta`, `message_stop`; `ping` and `error` are handled by the library): the text of the
 * `text_delta`s and the usage of `message_start` updated by `message_delta` (whose counts are
 * cumulative).
 */
async function readMessageStream(
  stream: AsyncIterable<unknown>,
  shownUrl: string,
  maxBytes: number,
  onText?: (piece: string) => void,
  calls?: NativeCall[],
): Promise<StreamedAnswer> {
  const text = new AnswerText(shownUrl, maxBytes, onText);
  const building = new Map<number, { name: string; arguments: string; given: unknown }>();
  const counted: { input?: number; output?: number } = {};
  let stopped = false;
  let stopReason: string | undefined;
  let toolUse = false;
  for await (const item of stream) {
    const event = asRecord(item);
    switch (event?.type) {
      case 'message_start':
        countTokens(asRecord(asRecord(event.message)?.usage), counted);
        break;
      case 'content_block_start': {
        const block = asRecord(event.content_block);
        if (block?.type === 'text' && typeof block.text === 'string') text.append(block.text);
        if (block?.type === 'tool_use') {
          toolUse = true;
          const index = typeof event.index === 'number' ? event.index : building.size;
          building.set(index, { name: typeof block.name === 'string' ? block.name : '', arguments: '', given: block.input });
        }
        break;
      }
      case 'content_block_delta': {
        const delta = asRecord(event.delta);
        if (delta?.type === 'text_delta' && typeof delta.text === 'string') text.append(delta.text);
        const call = typeof event.index === 'number' ? building.get(event.index) : undefined;
        if (delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string' && call !== undefined) {
          text.count(delta.partial_json);
          call.arguments += delta.partial_json;
        }
        break;
      }
      case 'message_delta': {
        countTokens(asRecord(event.usage), counted);
        const reason = asRecord(event.delta)?.stop_reason;
        if (typeof reason === 'string') stopReason = reason;
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      case undefined:
        throw protocolError(`${shownUrl} sent a stream event that is not a JSON object with a type`, 'The server is not speaking the Messages protocol as expected; check baseUrl and the server version.');
      default:
        // content_block_stop and event types added later carry nothing Redflow needs.
        break;
    }
  }
  if (!stopped) throw streamEndedEarly(shownUrl);
  if (calls !== undefined) {
    // A block whose input came whole at its start (no deltas) keeps that input.
    for (const call of building.values()) calls.push({ name: call.name, arguments: call.arguments === '' ? (JSON.stringify(call.given ?? {}) ?? '{}') : call.arguments });
  } else if (toolUse && text.text === '') {
    throw protocolError(
      `${shownUrl}: the model answered with tool_use blocks and no text`,
      'Redflow expects the JSON answer as text; do not configure native tools for this model.',
    );
  }
  const usage: TokenUsage | undefined =
    counted.input !== undefined && counted.output !== undefined
      ? { promptTokens: counted.input, completionTokens: counted.output, totalTokens: counted.input + counted.output }
      : undefined;
  return { text: text.text, usage, finishReason: stopReason };
}

/** The streaming model actor of {@link createAnthropicMessagesModel}, loaded with the first call. */
export function anthropicMessagesStream(config: AnthropicMessagesModelConfig): ModelActor {
  const settings = checkSettings(config, ANTHROPIC_DEFAULTS.baseUrl);
  const { shownUrl } = settings;
  const fetch = guardedFetch({ maxResponseBytes: settings.maxResponseBytes, shownUrl, fetch: settings.fetch });

  const clientFor = clientsByKey(settings.apiKey, async (apiKey): Promise<Anthropic> => {
    const { Anthropic } = await (library ??= import('@anthropic-ai/sdk'));
    return new Anthropic({
      ...libraryClientOptions(settings, fetch, apiKey),
      ...(apiKey === undefined && { defaultHeaders: { Authorization: null, 'X-Api-Key': null } }),
      openTelemetry: false,
    });
  });

  const format = config.decisionFormat ?? 'json_schema';
  /** How one request asks for its answer: a forced tool with the decision's schema, native tools, or the prompt alone. */
  const askFor = async (request: ModelRequest): Promise<Shape> => {
    const { decision } = request;
    const wanted = decision === undefined ? undefined : config.protocol === 'tools' ? 'tools' : format === 'json_schema' ? 'forced' : undefined;
    if (decision === undefined || wanted === undefined) return { kind: 'text' };
    return { kind: wanted, decision, protocol: await (decisionProtocol ??= import('./decisionProtocol.js')) };
  };

  const body = (request: ModelRequest, shape: Shape) => {
    const { system, messages } = messagesOf(request);
    return {
      model: settings.model,
      max_tokens: config.maxTokens ?? ANTHROPIC_DEFAULTS.maxTokens,
      messages,
      stream: true as const,
      ...(system !== undefined && { system }),
      ...(config.temperature !== undefined && { temperature: config.temperature }),
      ...shapeFields(shape),
    };
  };

  /** The decision JSON text of an answer that came as tool calls. */
  const answerOf = (shape: Shape, answer: StreamedAnswer, calls: readonly NativeCall[]): string => {
    if (shape.kind === 'text') return answer.text;
    if (shape.kind === 'tools') return shape.protocol.nativeAnswerText(answer.text, calls, shape.decision);
    const forced = calls.find((call) => call.name === shape.protocol.DECISION_SCHEMA_NAME);
    return shape.protocol.structuredAnswerText(forced === undefined ? answer.text : forced.arguments, shape.decision);
  };

  return createStreamingModel(
    settings,
    {
      kind: 'anthropic',
      keyHint: `it is read from $${ANTHROPIC_DEFAULTS.apiKeyEnv} or the variable named by the node's apiKeyEnv`,
      notFoundHint: `the API root without /v1 (e.g. ${ANTHROPIC_DEFAULTS.baseUrl})`,
      async streamOnce(request, apiKey, signal, onText) {
        const client = await clientFor(apiKey);
        const shape = await askFor(request);
        const { data, response } = await client.messages.create(body(request, shape), { signal }).withResponse();
        requireEventStream(response, shownUrl, () => data.controller.abort());
        const calls: NativeCall[] = [];
        // A forced tool's input is the answer: its pieces are what a live view shows.
        const shown = shape.kind === 'forced' ? undefined : onText;
        const answer = await readMessageStream(data, shownUrl, settings.maxResponseBytes, shown, shape.kind === 'text' ? undefined : calls);
        if (shape.kind === 'forced' && onText !== undefined) for (const call of calls) onText(call.arguments);
        return { ...answer, text: answerOf(shape, answer, calls) };
      },
    },
    config.retry,
  );
}
