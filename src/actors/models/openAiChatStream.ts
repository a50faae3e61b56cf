import type { OpenAI } from 'openai';
import type * as OpenAiLibrary from 'openai';
import type { TokenUsage } from '../../contracts/schema-types.js';
import type { ModelActor, ModelRequest } from '../model.js';
import { guardedFetch } from './guardedFetch.js';
import { clientsByKey, libraryClientOptions } from './libraryClients.js';
import { checkSettings, logToStderr } from './modelSettings.js';
import { OPENAI_DEFAULTS, OPENAI_EXAMPLE_URL, type OpenAiChatModelConfig } from './providerDefaults.js';
import { AnswerText, asRecord, isCount, protocolError, requireEventStream, streamEndedEarly } from './streamChecks.js';
import { createStreamingModel, type StreamedAnswer } from './streamingModel.js';
import type { DecisionContract } from '../model.js';
import type * as DecisionProtocolModule from './decisionProtocol.js';
import type { NativeCall } from './nativeTools.js';

/** How one request asks for its answer (see `decisionFormat` and `protocol`). */
type Shape =
  | { readonly kind: 'json_schema' | 'tools'; readonly decision: DecisionContract; readonly protocol: DecisionProtocol }
  | { readonly kind: 'json_object' | 'none' };

/** The decision's constrained output and native tools: loaded with the first request that carries a contract. */
type DecisionProtocol = typeof DecisionProtocolModule;

/** Loaded with the first request that carries a decision contract. */
let decisionProtocol: Promise<DecisionProtocol> | undefined;

/** The request fields of a {@link Shape}. */
function shapeFields(shape: Shape): Record<string, unknown> {
  switch (shape.kind) {
    case 'json_schema':
      return {
        response_format: { type: 'json_schema', json_schema: { name: shape.protocol.DECISION_SCHEMA_NAME, strict: true, schema: shape.protocol.decisionSchemaFor(shape.decision).schema } },
      };
    case 'tools':
      // One call per answer; no call at all is a final answer in plain text.
      return {
        tools: shape.protocol.nativeFunctionsFor(shape.decision).map((fn) => ({ type: 'function', function: fn })),
        tool_choice: 'auto',
        parallel_tool_calls: false,
      };
    case 'json_object':
      return { response_format: { type: 'json_object' } };
    case 'none':
      return {};
  }
}

/** Loaded on the first call, so `import 'redflow'` and scripted runs never load the library. */
let library: Promise<typeof OpenAiLibrary> | undefined;

/** Maps the token counts of a stream's usage chunk, when the server sent them. */
function toUsage(usage: unknown): TokenUsage | undefined {
  const counts = asRecord(usage);
  if (counts === undefined) return undefined;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = counts;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  return { promptTokens: prompt, completionTokens: completion, totalTokens: isCount(total) ? total : prompt + completion };
}

/**
 * Reads a Chat Completions stream (`chat.completion.chunk` events, then `[DONE]`): the text of
 * `choices[0].delta.content`, and the usage of the last chunk (`stream_options.include_usage`).
 */
async function readChatStream(
  stream: AsyncIterable<unknown>,
  shownUrl: string,
  maxBytes: number,
  onText?: (piece: string) => void,
  calls?: NativeCall[],
): Promise<StreamedAnswer> {
  const text = new AnswerText(shownUrl, maxBytes, onText);
  let usage: TokenUsage | undefined;
  let finished: string | undefined;
  let toolCalls = false;
  const building: { name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    const event = asRecord(chunk);
    if (event === undefined) {
      throw protocolError(`${shownUrl} sent a stream event that is not a JSON object`, 'The server is not speaking the Chat Completions protocol as expected; check baseUrl and the server version.');
    }
    usage = toUsage(event.usage) ?? usage;
    const choice = Array.isArray(event.choices) ? asRecord(event.choices[0]) : undefined;
    if (choice === undefined) continue;
    const delta = asRecord(choice.delta);
    if (typeof delta?.content === 'string') text.append(delta.content);
    if (Array.isArray(delta?.tool_calls) && delta.tool_calls.length > 0) {
      toolCalls = true;
      if (calls !== undefined) for (const piece of delta.tool_calls) addCallPiece(building, piece, text);
    }
    if (typeof choice.finish_reason === 'string') finished = choice.finish_reason;
  }
  if (finished === undefined) throw streamEndedEarly(shownUrl);
  if (calls !== undefined) calls.push(...building.filter((call) => call !== undefined));
  else if (toolCalls && text.text === '') {
    throw protocolError(
      `${shownUrl}: the model answered with tool_calls and no text content`,
      'Redflow expects the JSON answer as message content; do not configure native tools on the server for this model.',
    );
  }
  return { text: text.text, usage, finishReason: finished };
}

/**
 * Adds one streamed piece of a tool call (`{index, id?, function: {name?, arguments?}}`) to the
 * calls being built: the name comes once, the arguments in fragments. The fragments count
 * against the answer's size limit like its text.
 */
function addCallPiece(building: { name: string; arguments: string }[], piece: unknown, text: AnswerText): void {
  const fields = asRecord(piece);
  const index = typeof fields?.index === 'number' && Number.isInteger(fields.index) && fields.index >= 0 && fields.index < 64 ? fields.index : building.length;
  const fn = asRecord(fields?.function);
  const call = (building[index] ??= { name: '', arguments: '' });
  if (typeof fn?.name === 'string') {
    text.count(fn.name);
    call.name += fn.name;
  }
  if (typeof fn?.arguments === 'string') {
    text.count(fn.arguments);
    call.arguments += fn.arguments;
  }
}

/** A 400 that names the json_schema response format: the server does not take it. */
function refusesJsonSchema(error: unknown): boolean {
  return (error as { status?: unknown } | null)?.status === 400 && /response_format|json_schema/i.test(String((error as Error).message));
}

/** The streaming model actor of {@link createOpenAiChatModel}, loaded with the first call. */
export function openAiChatStream(config: OpenAiChatModelConfig): ModelActor {
  const settings = checkSettings(config, OPENAI_EXAMPLE_URL);
  const { shownUrl } = settings;
  const jsonMode = config.jsonMode ?? true;
  const fetch = guardedFetch({ maxResponseBytes: settings.maxResponseBytes, shownUrl, fetch: settings.fetch });

  const clientFor = clientsByKey(settings.apiKey, async (apiKey): Promise<OpenAI> => {
    const { OpenAI } = await (library ??= import('openai'));
    return new OpenAI({
      ...libraryClientOptions(settings, fetch, apiKey),
      ...(apiKey === undefined && { defaultHeaders: { Authorization: null } }),
      // Nothing from the environment besides what the node says: no admin key, organisation or project.
      adminAPIKey: null,
      organization: null,
      project: null,
    });
  });

  const format = config.decisionFormat ?? (jsonMode ? 'json_schema' : 'none');
  const log = config.log ?? logToStderr;
  /** Set once the server refused json_schema: this model asks for json_object from then on. */
  let jsonSchemaRefused = false;

  /** How one request asks for its answer: the decision's schema, native tools, any JSON object, or nothing. */
  const askFor = async (request: ModelRequest): Promise<Shape> => {
    const { decision } = request;
    const wanted = decision === undefined ? undefined : config.protocol === 'tools' ? 'tools' : format === 'json_schema' && !jsonSchemaRefused ? 'json_schema' : undefined;
    if (decision !== undefined && wanted !== undefined) return { kind: wanted, decision, protocol: await (decisionProtocol ??= import('./decisionProtocol.js')) };
    return { kind: format === 'none' ? 'none' : 'json_object' };
  };

  const body = (request: ModelRequest, shape: Shape) => ({
    model: settings.model,
    messages: request.messages.map(({ role, content }) => ({ role, content })),
    stream: true as const,
    stream_options: { include_usage: true },
    ...(config.temperature !== undefined && { temperature: config.temperature }),
    ...(config.maxTokens !== undefined && { max_tokens: config.maxTokens }),
    ...shapeFields(shape),
  });

  const send = async (request: ModelRequest, shape: Shape, apiKey: string | undefined, signal: AbortSignal, onText: ((piece: string) => void) | undefined) => {
    const client = await clientFor(apiKey);
    const { data, response } = await client.chat.completions.create(body(request, shape), { signal }).withResponse();
    requireEventStream(response, shownUrl, () => data.controller.abort());
    if (shape.kind !== 'tools') {
      const answer = await readChatStream(data, shownUrl, settings.maxResponseBytes, onText);
      return shape.kind === 'json_schema' ? { ...answer, text: shape.protocol.structuredAnswerText(answer.text, shape.decision) } : answer;
    }
    const calls: NativeCall[] = [];
    const answer = await readChatStream(data, shownUrl, settings.maxResponseBytes, onText, calls);
    return { ...answer, text: shape.protocol.nativeAnswerText(answer.text, calls, shape.decision) };
  };

  return createStreamingModel(
    settings,
    {
      kind: 'openai',
      keyHint: `it is read from $${OPENAI_DEFAULTS.apiKeyEnv} or the variable named by the node's apiKeyEnv`,
      notFoundHint: 'the API root, usually ending in /v1',
      async streamOnce(request, apiKey, signal, onText) {
        const shape = await askFor(request);
        try {
          return await send(request, shape, apiKey, signal, onText);
        } catch (error) {
          if (shape.kind !== 'json_schema' || !refusesJsonSchema(error) || signal.aborted) throw error;
          // Once per model actor: a server that does not take json_schema will not take it next time either.
          if (!jsonSchemaRefused) {
            jsonSchemaRefused = true;
            log(`redflow: ${shownUrl} refused response_format json_schema for model ${settings.model}; asking it for json_object from now on (set the model node's "decisionFormat": "json_object" to skip the first try)`);
          }
          return send(request, { kind: 'json_object' }, apiKey, signal, onText);
        }
      },
    },
    config.retry,
  );
}
