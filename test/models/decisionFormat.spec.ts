import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { createOpenAiChatModel, type OpenAiChatModelConfig } from '../../src/actors/models/openAiChatModel.js';
import { structuredAnswerText } from '../../src/actors/models/decisionAnswer.js';
import { decisionSchemaFor } from '../../src/actors/models/decisionSchema.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { ErrorCode, type RedflowError } from '../../src/errors.js';
import { buildAnswerRules } from '../../src/runtime/answerRules.js';
import { decisionContractFor } from '../../src/runtime/answerRules.js';
import { validateModelAnswer } from '../../src/validation/validateModelAnswer.js';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { agentConfig, countingTool, runWithModel } from '../support/harness.js';
import { caught } from '../support/modelCalls.js';
import { thrown } from '../support/thrown.js';

let server: FakeChatServer;
beforeEach(async () => {
  server = await startFakeChatCompletionsServer();
});
afterEach(() => stopFakeChatCompletionsServer(server));

function model(overrides: Partial<OpenAiChatModelConfig> = {}): ModelActor {
  return createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-test', timeoutMs: 5000, maxRetries: 0, ...overrides });
}

const echo = countingTool().tool;
const contract = decisionContractFor(agentConfig(), [echo]);
const REQUEST: ModelRequest = { traceId: 't', iteration: 0, messages: [{ role: 'user', content: 'hi' }], decision: contract };

type Body = { response_format?: { type: string; json_schema?: { name: string; strict: boolean; schema: Record<string, unknown> } } };
const bodyOf = (index: number) => server.requests[index]?.body as Body;
const wrapped = (decision: unknown) => JSON.stringify({ decision });

describe('decisionFormat json_schema (the default) on a Chat Completions server', () => {
  it('should send the decision as a strict json_schema with each allowed tool and its input schema inside, and run on its unwrapped answers', async () => {
    const { tool, calls } = countingTool();
    server.enqueue(
      { kind: 'completion', content: wrapped({ action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.8, message: null }) },
      { kind: 'completion', content: wrapped({ action: 'final', message: 'It echoed hi', confidence: 0.9 }) },
    );
    const { result, events } = await runWithModel(model(), { tools: [tool] });

    expect(result.outcome).toMatchObject({ status: 'done', answer: 'It echoed hi' });
    expect(calls).toEqual([{ text: 'hi' }]);
    // The log holds the decision the core validated, not the provider's wrapper or its nulls.
    const answered = events.filter((event) => event.type === 'model.answered').map((event) => (event.data as { text: string }).text);
    expect(answered[0]).toBe('{"action":"tool","tool":"echo","input":{"text":"hi"},"confidence":0.8}');

    const format = bodyOf(0).response_format;
    expect(format?.type).toBe('json_schema');
    expect(format?.json_schema).toMatchObject({ name: 'react_decision', strict: true });
    const schema = format?.json_schema?.schema as { required: string[]; additionalProperties: boolean; properties: { decision: { anyOf: Record<string, unknown>[] } } };
    expect(schema).toMatchObject({ type: 'object', required: ['decision'], additionalProperties: false });
    const branches = schema.properties.decision.anyOf;
    expect(branches.map((branch) => (branch as { properties: { action: { enum: string[] } } }).properties.action.enum[0])).toEqual(['tool', 'final', 'escalate', 'request_info', 'delegate']);
    // The tool's optional "text" is required and nullable in strict mode; every object is closed.
    expect(branches[0]).toEqual({
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['tool'] },
        tool: { type: 'string', enum: ['echo'] },
        input: { type: 'object', properties: { text: { type: ['string', 'null'] } }, required: ['text'], additionalProperties: false },
        confidence: expect.objectContaining({ type: 'number' }) as unknown,
        message: { type: ['string', 'null'] },
      },
      required: ['action', 'tool', 'input', 'confidence', 'message'],
      additionalProperties: false,
    });
    // The same schema object for each request of the run: compiled once.
    expect(bodyOf(1).response_format).toEqual(format);
  });

  it('should ask for the reasoning fields, the thought first, when the agent reasons explicitly', () => {
    const explicit = decisionContractFor(agentConfig({ reasoning: 'explicit' }), [echo]);
    const tool = (decisionSchemaFor(explicit).schema as { properties: { decision: { anyOf: { properties: object; required: string[] }[] } } }).properties.decision.anyOf[0];
    expect(tool?.required).toEqual(['thought', 'reflection', 'action', 'tool', 'input', 'confidence', 'message', 'decision', 'reason']);
    expect(tool?.properties).toMatchObject({ thought: { type: 'string' }, decision: { enum: ['continue', null] } });
  });

  it('should ask for the input of a tool strict mode cannot describe as JSON text, and give the core the object', () => {
    const open: ToolDefinition = { ...echo, name: 'open', inputSchema: { type: 'object' } };
    const loose = decisionContractFor(agentConfig({ allowedTools: ['open'] }), [open]);
    const branch = (decisionSchemaFor(loose).schema as { properties: { decision: { anyOf: { properties: { input: unknown } }[] } } }).properties.decision.anyOf[0];
    expect(branch?.properties.input).toMatchObject({ type: 'string' });
    const text = structuredAnswerText(wrapped({ action: 'tool', tool: 'open', input: '{"any":[1,2]}', confidence: 0.5, message: null }), loose);
    expect(JSON.parse(text)).toEqual({ action: 'tool', tool: 'open', input: { any: [1, 2] }, confidence: 0.5 });
  });

  it('should fall back to json_object for the rest of the model actor when the server refuses json_schema, retrying at once and logging it once', async () => {
    const lines: string[] = [];
    const refusing = model({ log: (line) => lines.push(line) });
    const final = '{"action":"final","message":"ok","confidence":1}';
    server.enqueue(
      { kind: 'error', status: 400, message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model." },
      { kind: 'completion', content: final },
      { kind: 'completion', content: final },
    );
    const first = await refusing.complete(REQUEST, AbortSignal.timeout(5000));
    const second = await refusing.complete(REQUEST, AbortSignal.timeout(5000));

    expect([first.text, second.text]).toEqual([final, final]);
    expect(server.requests.map((request) => (request.body as Body).response_format?.type)).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('json_schema');
  });

  it('should not take a 400 about something else for a refusal of json_schema', async () => {
    server.enqueue({ kind: 'error', status: 400, message: 'max_tokens is too large' });
    const error = await caught(model().complete(REQUEST, AbortSignal.timeout(5000)));
    expect(error).toMatchObject({ code: ErrorCode.MODEL_REQUEST_REJECTED });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['json_object', { decisionFormat: 'json_object' }, { type: 'json_object' }],
    ['none', { decisionFormat: 'none' }, undefined],
    ['jsonMode false (as before)', { jsonMode: false }, undefined],
  ] as const)('should send %s when the node asks for it', async (_name, settings, expected) => {
    server.enqueue({ kind: 'completion', content: '{"action":"final","message":"ok"}' });
    await model(settings).complete(REQUEST, AbortSignal.timeout(5000));
    expect(bodyOf(0).response_format).toEqual(expected);
  });

  it('should ask for json_object, as before, for a request that carries no decision contract', async () => {
    server.enqueue({ kind: 'completion', content: '{}' });
    await model().complete({ traceId: 't', iteration: 0, messages: REQUEST.messages }, AbortSignal.timeout(5000));
    expect(bodyOf(0).response_format).toEqual({ type: 'json_object' });
  });
});

describe('model settings', () => {
  it.each([
    ['decisionFormat', { decisionFormat: 'xml' }],
    ['protocol', { protocol: 'functions' }],
  ] as const)('should refuse an unknown %s with MODEL_CONFIG_INVALID before any request', (name, settings) => {
    const error = thrown(() => model(settings as unknown as Partial<OpenAiChatModelConfig>));
    expect(error).toMatchObject({ code: ErrorCode.MODEL_CONFIG_INVALID, path: `/${name}` });
    expect((error as RedflowError).hint).toContain(name);
  });
});

describe('the decision schema is compiled once per flow', () => {
  const tools: ToolDefinition[] = Array.from({ length: 20 }, (_, i) => ({
    ...echo,
    name: `tool_${i}`,
    inputSchema: { type: 'object', properties: { id: { type: 'string' }, limit: { type: 'integer', minimum: 1 }, tags: { type: 'array', items: { type: 'string' } } }, required: ['id'] },
  }));
  const agent = agentConfig({ allowedTools: tools.map((tool) => tool.name), maxIterations: 4 });

  it('should give every request of a run one contract object, whose compiled schema is shared even by a copy that crossed the wire', async () => {
    const seen: ModelRequest['decision'][] = [];
    const answers = ['{"action":"tool","tool":"tool_3","input":{"id":"a"},"confidence":0.2}', '{"action":"tool","tool":"tool_4","input":{"id":"b"},"confidence":0.2}', '{"action":"final","message":"done"}'];
    const recording: ModelActor = {
      kind: 'recording',
      complete: (request) => {
        seen.push(request.decision);
        return Promise.resolve({ text: answers[seen.length - 1] ?? '', attempts: 1 });
      },
    };
    const { result } = await runWithModel(recording, { tools, agent });

    expect(result.outcome.status).toBe('done');
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(1);
    const [decision] = seen;
    if (decision === undefined) throw new Error('the requests carried no decision contract');
    expect(decision.tools.map((tool) => tool.name)).toEqual(agent.allowedTools);
    const compiled = decisionSchemaFor(decision);
    expect(decisionSchemaFor(JSON.parse(JSON.stringify(decision)) as typeof decision)).toBe(compiled);
    expect((compiled.schema as { properties: { decision: { anyOf: unknown[] } } }).properties.decision.anyOf).toHaveLength(24);
  });
});

describe('answers under json_schema are judged as before', () => {
  const rules = buildAnswerRules(['echo'], [echo]);
  const codeOf = (text: string) => {
    const verdict = validateModelAnswer(text, rules);
    return verdict.ok ? 'ok' : verdict.error.code;
  };
  // Each is refused today; wrapped as a json_schema answer, and as it is, it is refused with the same code.
  const refused: [string, string][] = [
    ['tool without confidence', '{"action":"tool","tool":"echo","input":{}}'],
    ['tool not allowed', '{"action":"tool","tool":"rm","input":{},"confidence":1}'],
    ['input not matching', '{"action":"tool","tool":"echo","input":{"text":3},"confidence":1}'],
    ['blank final message', '{"action":"final","message":"  "}'],
    ['unknown action', '{"action":"dance"}'],
    ['confidence out of range', '{"action":"tool","tool":"echo","input":{},"confidence":3}'],
    ['duplicate key', '{"action":"final","message":"a","message":"b"}'],
    ['reserved key', '{"action":"final","message":"a","__proto__":{"x":1}}'],
    ['unknown property', '{"action":"final","message":"a","mood":"good"}'],
    ['decision against the action', '{"action":"final","message":"a","decision":"continue"}'],
  ];

  it.each(refused)('should still refuse %s', (_name, text) => {
    const today = codeOf(text);
    expect(today).not.toBe('ok');
    expect(codeOf(structuredAnswerText(text, contract))).toBe(today);
    expect(codeOf(structuredAnswerText(`{"decision":${text}}`, contract))).toBe(today);
  });

  it.each(['not json', '[1,2]', '{"decision":{"action":"final","message":"a"},"extra":1}', '{"decision":"final"}', ''])('should hand %j to the core as it came', (text) => {
    expect(structuredAnswerText(text, contract)).toBe(text);
  });
});
