import type { ToolSpec } from '../contracts/schema-types.js';
import { createInProcessTransport } from '../actors/inProcessTransport.js';
import type { MemoryStore } from '../actors/memory.js';
import type { ModelActor } from '../actors/model.js';
import { serveMemory, serveModel, serveTool } from './serveActors.js';
import { DEFAULT_SUBJECT_PREFIX, Subject } from '../actors/subjects.js';
import type { ToolDefinition } from '../actors/tool.js';
import type { Subscription, Transport } from '../actors/transport.js';
import type { ActorSubjects } from './transportActor.js';

/** The actors of an embedded run. */
export interface EmbeddedActorsOptions {
  readonly model: ModelActor;
  /** The agent's own verifier model (`verification.model`), served on the model subject of `id`. */
  readonly verifier?: { readonly model: ModelActor; readonly id: string };
  readonly tools: readonly ToolDefinition[];
  readonly memory?: MemoryStore;
  /** Subject prefix (default `redflow`). */
  readonly prefix?: string;
  /** Serve on this transport instead of a new in-process one. */
  readonly transport?: Transport;
  /** Id used in the model's and memory's subjects (default `model` / `memory`). */
  readonly modelId?: string;
  readonly memoryId?: string;
}

/** Actors served and ready: hand `transport`, `subjects` and `tools` to `startRun`. */
export interface ServedActors {
  readonly transport: Transport;
  readonly subjects: ActorSubjects;
  readonly tools: readonly ToolSpec[];
  readonly prefix: string;
  readonly memorySubjects?: { readonly loadSubject: string; readonly appendSubject: string };
  /** The served model's name at its provider, when it has one: a run's budget prices and counts by it. */
  readonly modelName?: string;
  /** Stops serving (and closes the transport if it was created here). */
  close(): Promise<void>;
}

/**
 * Serves a model, tools and optionally a memory store on a transport (a new in-process one by
 * default): the embedded mode's wiring.
 *
 * @example
 * ```ts
 * const actors = serveActors({ model: createScriptedModel(answers), tools: [addTool] });
 * const run = startRun({ ...actors, agent, store: createMemoryEventStore(), input: 'add 1 and 2' });
 * ```
 */
export function serveActors(options: EmbeddedActorsOptions): ServedActors {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  const ownTransport = options.transport === undefined;
  const transport = options.transport ?? createInProcessTransport();
  const modelSubject = Subject.model(prefix, options.modelId ?? 'model');
  const served: Subscription[] = [serveModel(transport, modelSubject, options.model, { chunkPrefix: prefix })];
  const verifierSubject = options.verifier && Subject.model(prefix, options.verifier.id);
  if (options.verifier && verifierSubject) served.push(serveModel(transport, verifierSubject, options.verifier.model, { chunkPrefix: prefix }));
  for (const tool of options.tools) served.push(serveTool(transport, Subject.tool(prefix, tool.name), tool, { livePrefix: prefix }));
  const memoryId = options.memoryId ?? 'memory';
  if (options.memory) served.push(serveMemory(transport, prefix, memoryId, options.memory));
  return {
    transport,
    prefix,
    subjects: { model: modelSubject, ...(verifierSubject && { verifier: verifierSubject }), tool: (name) => Subject.tool(prefix, name), live: (traceId) => Subject.runChunk(prefix, traceId) },
    tools: options.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
    ...(options.model.model !== undefined && { modelName: options.model.model }),
    ...(options.memory && {
      memorySubjects: { loadSubject: Subject.memoryLoad(prefix, memoryId), appendSubject: Subject.memoryAppend(prefix, memoryId) },
    }),
    async close() {
      for (const subscription of served) subscription.unsubscribe();
      if (ownTransport) await transport.close();
    },
  };
}

/**
 * `model` as an agent's verifier (`verification.model`, docs/verification.md): each answer says
 * which model it is (`answeredBy`, unless a fallback already said), so the run's
 * `verification.completed` records which model verified.
 *
 * @example
 * ```ts
 * serveActors({ model, verifier: { model: asVerifier(judge), id: 'judge' }, tools: [] });
 * ```
 */
export function asVerifier(model: ModelActor): ModelActor {
  const answeredBy = { provider: model.kind, model: model.model ?? model.kind };
  return {
    kind: model.kind,
    ...(model.model !== undefined && { model: model.model }),
    async complete(request, signal, options) {
      const answer = await model.complete(request, signal, options);
      return answer.answeredBy === undefined ? { ...answer, answeredBy } : answer;
    },
  };
}
