import { isDeepStrictEqual } from 'node:util';
import type { ForkChanges, ModelLlmConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import type { ModelActor } from '../actors/model.js';
import type { ToolDefinition, ToolRequest } from '../actors/tool.js';
import type { ModelRequest } from '../actors/model.js';
import type { Reply, RequestOptions, Transport } from '../actors/transport.js';
import type { ActorSubjects } from '../runtime/transportActor.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';
import type { FlowActors } from '../runtime/flowActors.js';

// A fork records its changes in its `run.forked` event, and every process that runs it (the fork
// itself, a `redflow resume` after a crash) applies them from there: the log decides, as it does
// for the agent and its tools.

/**
 * The changes a forked run goes on with, read off its log (`undefined` for a run that is no fork).
 *
 * @example
 * ```ts
 * const changes = forkChangesOf((await readJsonlLog('fork.jsonl')).events); // { model: { model: 'gpt-4o' } }
 * ```
 */
export function forkChangesOf(events: readonly AgentEvent[]): ForkChanges | undefined {
  const second = events[1];
  return second?.type === AgentEventType.RunForked ? second.data.changes : undefined;
}

/**
 * The flow with the fork's model settings merged over its model node's (a provider, a model name,
 * a base URL). Only the copy changes: the flow file stays as it is.
 *
 * @example
 * ```ts
 * const changed = withModelSettings(flow, { provider: 'openai', model: 'gpt-4o-mini' });
 * ```
 */
export function withModelSettings(flow: ResolvedFlow, settings: ForkChanges['model']): ResolvedFlow {
  if (settings === undefined) return flow;
  const config = { ...((flow.model.config ?? {}) as ModelLlmConfig), ...(settings as ModelLlmConfig) };
  return { ...flow, model: { ...flow.model, config: config as unknown as NonNullable<ResolvedFlow['model']['config']> } };
}

/**
 * The actors with the fork's scripted pieces in front of them: a model answer given for an
 * iteration (`answers`), a tool output given for an iteration (`toolResults`), and a recorded call
 * answered from the record when the live call has the same tool and input (`replayTools`); every
 * other call goes to the real model or tool.
 *
 * @example
 * ```ts
 * const actors = withForkChanges(await buildFlowActors(flow, { baseDir }), { answers: { 3: { action: 'final', message: 'done', confidence: 1 } } });
 * ```
 */
export function withForkChanges(actors: FlowActors, changes: ForkChanges | undefined): FlowActors {
  if (changes === undefined) return actors;
  const { answers, toolResults, replayTools } = changes;
  const scriptedModel = answers === undefined || Object.keys(answers).length === 0 ? actors.model : answerFirst(actors.model, answers);
  if (toolResults === undefined && replayTools === undefined) return { ...actors, model: scriptedModel };
  const tools = actors.tools.map((tool) => resultFirst(tool, toolResults ?? {}, replayTools ?? {}));
  return { ...actors, model: scriptedModel, tools };
}

function answerFirst(model: ModelActor, answers: NonNullable<ForkChanges['answers']>): ModelActor {
  return {
    ...model,
    complete(request, signal, call) {
      const given = request.purpose === 'verification' ? undefined : answers[String(request.iteration)];
      if (given === undefined) return model.complete(request, signal, call);
      return Promise.resolve({ text: typeof given === 'string' ? given : JSON.stringify(given), attempts: 1 });
    },
  };
}

function resultFirst(tool: ToolDefinition, given: NonNullable<ForkChanges['toolResults']>, recorded: NonNullable<ForkChanges['replayTools']>): ToolDefinition {
  return {
    ...tool,
    execute(input, context) {
      const key = String(context.iteration);
      if (Object.hasOwn(given, key)) return given[key];
      const call = recorded[key];
      if (call !== undefined && call.tool === tool.name && isDeepStrictEqual(call.input, input)) {
        if (call.ok) return call.output;
        // A recorded failure is given back as the same error the model saw then.
        const error = call.error as ErrorInfo | undefined;
        throw new RedflowError(error?.code !== undefined ? error : errorInfo(ErrorCode.TOOL_FAILED, 'the recorded call failed'));
      }
      return tool.execute(input, context);
    },
  };
}

/**
 * The transport of a fork whose actors live elsewhere (a core worker's, which reaches them over
 * NATS): the fork's scripted pieces answer here, as `withForkChanges` answers them in front of local
 * actors, and every other request goes out. A model answer given for an iteration answers the
 * model subject's request of that iteration; a tool output given for an iteration (or a recorded
 * call whose tool and input match) answers that iteration's tool request.
 *
 * @example
 * ```ts
 * const forked = withForkReplies(transport, subjects, forkChangesOf(events));
 * ```
 */
export function withForkReplies(transport: Transport, subjects: Pick<ActorSubjects, 'model' | 'tool'>, changes: ForkChanges | undefined): Transport {
  if (changes === undefined) return transport;
  const { answers = {}, toolResults = {}, replayTools = {} } = changes;
  if (Object.keys(answers).length + Object.keys(toolResults).length + Object.keys(replayTools).length === 0) return transport;
  const given = <Res>(data: unknown): Promise<Reply<Res>> => Promise.resolve({ ok: true, data: data as Res });
  return {
    request<Req, Res>(subject: string, data: Req, options: RequestOptions): Promise<Reply<Res>> {
      if (subject === subjects.model) {
        const request = data as unknown as ModelRequest;
        const answer = request.purpose === 'verification' ? undefined : answers[String(request.iteration)];
        if (answer !== undefined) return given({ text: typeof answer === 'string' ? answer : JSON.stringify(answer), attempts: 1 });
      } else if (isToolRequest(data) && subject === subjects.tool(data.tool)) {
        const key = String(data.iteration);
        if (Object.hasOwn(toolResults, key)) return given({ ok: true, output: toolResults[key] });
        const call = replayTools[key];
        if (call !== undefined && call.tool === data.tool && isDeepStrictEqual(call.input, data.input)) {
          return given(call.ok ? { ok: true, output: call.output } : { ok: false, error: (call.error as ErrorInfo | undefined) ?? errorInfo(ErrorCode.TOOL_FAILED, 'the recorded call failed') });
        }
      }
      return transport.request<Req, Res>(subject, data, options);
    },
    serve: (subject, handler, options) => transport.serve(subject, handler, options),
    publish: (subject, data, headers) => transport.publish(subject, data, headers),
    subscribe: (pattern, handler) => transport.subscribe(pattern, handler),
    // Shared with the other runs: closing it is its owner's business.
    close: () => Promise.resolve(),
  };
}

function isToolRequest(data: unknown): data is ToolRequest {
  if (typeof data !== 'object' || data === null) return false;
  const { tool, iteration } = data as Partial<ToolRequest>;
  return typeof tool === 'string' && typeof iteration === 'number';
}
