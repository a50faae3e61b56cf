import type { AgentEnvelope, ToolSpec } from '../contracts/schema-types.js';
import { ApiError, ErrorCode, errorInfo, RedflowError } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { logStatus } from '../events/resumePoint.js';
import type { StepLogs } from './stepLogs.js';
import type { ModelActor } from '../actors/model.js';
import { answerWaitingRun, settleRun, type RunSettlement } from '../host/answerWaitingRun.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { serveActors } from '../runtime/embeddedActors.js';
import type { RunHandle } from '../runtime/runSession.js';
import { startRun } from '../host/admission.js';
import { agentFor, contextBudgetFor, sessionBudgetLeft } from './stepAgent.js';
import { parseToolSignatures, type ToolSignature } from '../validation/actionSyntax.js';
import { fitStepContext } from './fitStepContext.js';
import { historyLimitProblem } from './historyLimits.js';
import type { ReactStepRequest, ReactStepResponse } from './reactStepTypes.js';
import { matchHistory, matchQuery, sessionPosition, sessionTraceId, type ClientCall, type ClientObservation, type SessionPosition } from './sessionTurns.js';
import { gatherStepContext, renderContext } from './workspaceContext.js';
import { DEFAULT_STEP_ITERATIONS, noIterationLeft, respond } from './stepResponse.js';
import { historyMessages, loggedObservation, rebuildFromHistory, refuseUnlisted, toolResult } from './sessionHistory.js';

export { DEFAULT_STEP_ITERATIONS } from './stepResponse.js';

/** The most a query's run may make: an agent's `maxIterations` limit (agent-core.react.schema.json). */
const MAX_ITERATIONS = 20;

/** What the step service needs: where sessions are logged, the models it offers, the workspace. */
export interface StepServiceOptions {
  /** Where each query's run is logged: the runs directory ({@link jsonlStepLogs}) or JetStream. */
  readonly logs: StepLogs;
  /**
   * The models a step may name in `llm_config.modelName`, by that name: each builds the model for
   * one step, with the key the step brought (`user_api_keys.llmKey`) when it brought one.
   */
  readonly models: ReadonlyMap<string, StepModelFactory>;
  /** Files are read for context only inside this folder (`serve --workspace`); none without it. */
  readonly workspace?: string;
  readonly clock?: Clock;
}

/** What a step's `llm_config` sets on its model calls, over the models file's settings. */
export interface StepModelSettings {
  readonly temperature?: number;
  /** The answer's tokens at most: the step's `reservedOutputTokens`. */
  readonly maxTokens?: number;
}

/**
 * Builds a model for one step, with the step's own API key when it brought one, and its
 * temperature and answer size.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` for a setting the provider does not take (a
 *   temperature over 1 for Anthropic).
 */
export type StepModelFactory = ((apiKey: string | undefined, settings?: StepModelSettings) => Promise<ModelActor>) & {
  /**
   * True when the model's server is on this machine (a loopback address: Ollama, vLLM,
   * llama.cpp), whose key may be short (`ollama`): see holdStepKey. Unset: a remote provider.
   */
  readonly servedLocally?: boolean;
};

/** The step service: one decision per call, on the same statechart and log as every run. */
export interface StepService {
  step(request: ReactStepRequest): Promise<ReactStepResponse>;
  /** True when the model named so is served on this machine (its key may be short); false for an unknown name. */
  servesLocally(modelName: string): boolean;
}

/**
 * The ReAct step service: each session's query is a Redflow run whose tools its client executes.
 * A step starts the query's run (or hands the run the observation it waits for) and lets it go on
 * until it proposes a tool call — the run then waits in its log, holding no process — or answers.
 * The client's history is checked against the log (a coded 409 when they disagree); a run whose
 * log is missing (another server, a lost log) is rebuilt from the history first.
 *
 * @example
 * ```ts
 * const service = createStepService({ runsDir: '.redflow/runs', models: new Map([['gpt-4o', model]]) });
 * const answer = await service.step(parseReactStepRequest(body));
 * ```
 */
export function createStepService(options: StepServiceOptions): StepService {
  const clock = options.clock ?? systemClock;
  return {
    servesLocally: (modelName) => options.models.get(modelName)?.servedLocally === true,
    async step(request) {
      const history = request.conversation_history;
      const queryStart = request.user_query.trim() !== '' ? history.length : history.findLastIndex((turn) => turn.role === 'user');
      const tooLarge = historyLimitProblem(history, queryStart);
      if (tooLarge !== undefined) throw new ApiError(tooLarge);
      const position = sessionPosition(request);
      if (!('queryNumber' in position)) throw new ApiError(position);
      const build = options.models.get(request.llm_config.modelName);
      if (build === undefined) {
        throw new ApiError(
          errorInfo(ErrorCode.REACT_STEP_MODEL_UNKNOWN, `the server has no model ${JSON.stringify(request.llm_config.modelName.slice(0, 80))}`, {
            hint: `use one of: ${[...options.models.keys()].join(', ') || '(none: start the server with --models <file>)'}`,
            path: '/llm_config/modelName',
          }),
        );
      }
      const traceId = sessionTraceId(request.session_id, position.queryNumber);
      const exists = await options.logs.exists(traceId);
      const key = request.user_api_keys?.llmKey;
      const { temperature, reservedOutputTokens } = request.llm_config;
      const settings = { ...(temperature !== undefined && { temperature }), ...(reservedOutputTokens !== undefined && { maxTokens: reservedOutputTokens }) };
      const model = await build(key === undefined || key.trim() === '' ? undefined : key, settings).catch((error: unknown) => {
        // The client's settings are what the provider refused: say which, as a request error.
        if (error instanceof RedflowError && error.code === ErrorCode.MODEL_CONFIG_INVALID) {
          throw new ApiError(errorInfo(ErrorCode.MODEL_CONFIG_INVALID, `llm_config for ${request.llm_config.modelName}: ${error.message}`, { path: '/llm_config', ...(error.hint !== undefined && { hint: error.hint }) }));
        }
        throw error;
      });
      try {
        return await runStep({ request, position, traceId, exists, model, options, clock });
      } catch (error) {
        throw conflictOnConcurrentStep(error, traceId);
      }
    },
  };
}

interface StepRun {
  readonly request: ReactStepRequest;
  readonly position: SessionPosition;
  readonly traceId: string;
  readonly exists: boolean;
  readonly model: ModelActor;
  readonly options: StepServiceOptions;
  readonly clock: Clock;
}

async function runStep(step: StepRun): Promise<ReactStepResponse> {
  const { request, position, traceId } = step;
  const signatures = parseToolSignatures(request.available_tools_prompt_segment ?? '');
  const tools = clientTools(signatures);
  // The model was built with this request's key, if it brought one: the key goes with each call
  // beside the request, never in it, so no event or log line holds it.
  let lastAnswer: string | undefined;
  // While a log behind the client's history catches up, the model's decisions are the history's.
  let replaying: ClientCall | undefined;
  const model: ModelActor = {
    kind: step.model.kind,
    // Its name too: the `chat <model>` span and the token metrics are named by it.
    ...(step.model.model !== undefined && { model: step.model.model }),
    complete: async (modelRequest, signal, callOptions) => {
      if (replaying !== undefined) return { text: JSON.stringify({ action: 'tool', tool: replaying.tool, input: replaying.input, confidence: 1 }), attempts: 1 };
      const answer = await step.model.complete(modelRequest, signal, callOptions);
      lastAnswer = answer.text;
      return answer;
    },
  };
  // A query with no iteration left is answered without asking the model, or starting its run (a
  // run's log keeps its limit, at least 1).
  if (!step.exists && iterationLimit(request, position, undefined) === 0) return noIterationLeft(step);
  // What the session's earlier queries left of its budget is this query's run's budget.
  const left = await sessionBudgetLeft(request, position.queryNumber, step.options.logs);
  if (left !== undefined && 'code' in left) return noIterationLeft(step, left);
  const actors = serveActors({ model, tools: [] });
  const store = await step.options.logs.open(traceId);
  try {
    const logged = step.exists ? (await store.read(traceId)).events[0] : undefined;
    const agent = agentFor(request, tools, iterationLimit(request, position, logged), left);
    const budget = await contextBudgetFor(request);
    const environment = {
      ...actors,
      agent,
      tools,
      store,
      clock: step.clock,
      textActions: { signatures },
      ...(budget !== undefined && { contextBudget: budget }),
      modelName: step.model.model ?? request.llm_config.modelName,
      // Each query of a session is a run (a trace) of its own: telemetry ties them by the session.
      sessionId: request.session_id,
    };
    let known = position.calls.length;
    let settlement: RunSettlement | undefined;
    // A step's client runs tools and shows answers, and cannot hold a run for a person's answer: a
    // question the model asks (escalate, request_info) ends the query's run at once (escalate),
    // and the step answers with the question; the user's reply is the session's next query.
    const settle = async (handle: RunHandle): Promise<RunSettlement> => {
      const settled = await settleRun(handle);
      if (settled.kind !== 'waiting' || settled.wait.kind !== 'human') return settled;
      return settleRun(await answerWaitingRun({ ...environment, traceId, answer: { kind: 'expire' } }));
    };
    // The client's result for the call the run waits on. One past the wait's deadline is refused
    // (WAIT_EXPIRED) once the run has ended blocked (wait_expired): the step reports the run so.
    const answerCall = async (idempotencyKey: string, observation: ClientObservation): Promise<RunSettlement> => {
      try {
        return await settle(await answerWaitingRun({ ...environment, traceId, answer: { kind: 'client', idempotencyKey, result: toolResult(observation) } }));
      } catch (error) {
        if (!(error instanceof RedflowError && error.code === ErrorCode.WAIT_EXPIRED)) throw error;
        const { events } = await store.read(traceId);
        const ended = logStatus(events);
        if (ended.kind !== 'finished') throw error;
        return { kind: 'ended', traceId, outcome: ended.outcome, envelope: ended.envelope, lastSeq: (events.at(-1) as AgentEvent).seq };
      }
    };
    if (!step.exists) {
      const context = await gatherStepContext(request, step.options.workspace === undefined ? {} : { root: step.options.workspace });
      const fitted = budget === undefined ? context : fitStepContext(context, Math.floor(budget.maxTokens / 2), budget.countTokens);
      const contextText = renderContext(fitted);
      if (!position.newQuery && position.calls.length > 0) {
        await rebuildFromHistory(store, traceId, position, agent, tools, contextText, step.clock);
      } else {
        settlement = await settle(
          startRun({
            ...environment,
            traceId,
            input: position.query,
            history: historyMessages(position.earlierTurns),
            ...(contextText !== undefined && { context: contextText }),
          }),
        );
        known = 0;
      }
    }
    if (settlement === undefined) {
      let { events } = await store.read(traceId);
      const started = events[0];
      const otherQuery = started?.type === 'run.started' ? matchQuery(position, started.data.input) : undefined;
      if (otherQuery !== undefined) throw new ApiError(otherQuery);
      let envelope = events.reduce<AgentEnvelope>((acc, event) => evolve(acc, event), emptyEnvelope(traceId));
      let match = matchHistory(position.calls, envelope.tools.history, loggedObservation);
      // This log is behind the history (other servers took the session's last steps): it catches
      // up, each call the history made next recorded as the model's decision, as a rebuild would.
      if (match.kind === 'ahead') refuseUnlisted(position, agent);
      for (let behind = position.calls.length; match.kind === 'ahead' && behind > 0; behind -= 1) {
        replaying = match.next;
        try {
          await answerCall(match.idempotencyKey, match.observation);
        } finally {
          replaying = undefined;
        }
        ({ events } = await store.read(traceId));
        envelope = events.reduce<AgentEnvelope>((acc, event) => evolve(acc, event), emptyEnvelope(traceId));
        match = matchHistory(position.calls, envelope.tools.history, loggedObservation);
      }
      if (match.kind === 'conflict') throw new ApiError(match.error);
      if (match.kind === 'answers') {
        settlement = await answerCall(match.idempotencyKey, match.observation);
        return respond(step, settlement.envelope, (await store.read(traceId)).events, known, lastAnswer);
      }
      return respond(step, envelope, events, known, undefined);
    }
    return respond(step, settlement.envelope, (await store.read(traceId)).events, known, lastAnswer);
  } finally {
    await store.close().catch(() => undefined);
    await actors.close();
  }
}


/** The client's tools as specs: executed by the client, their parameters as the prose list names them. */
function clientTools(signatures: readonly ToolSignature[]): ToolSpec[] {
  return signatures.map((signature) => {
    // The declaring line, not the first mentioning the tool (a format line before the list).
    const line = signature.line ?? signature.name;
    return {
      name: signature.name,
      description: line.slice(0, 500),
      inputSchema: { type: 'object', properties: Object.fromEntries(signature.params.map((param) => [param, {}])) },
      executor: 'client',
    };
  });
}

/**
 * The query's iteration limit. `max_iterations_left` counts from the step that brings it: the
 * query's first step sets its run's limit, which its log keeps and its later steps go on with
 * (their `iterations_remaining` is what the log leaves, whatever they send); a run rebuilt from
 * the history has had one iteration per call the history shows, and this step's left after them.
 */
function iterationLimit(request: ReactStepRequest, position: SessionPosition, started: AgentEvent | undefined): number {
  if (started?.type === 'run.started') return started.data.agent.maxIterations;
  const left = request.max_iterations_left ?? DEFAULT_STEP_ITERATIONS;
  if (!position.newQuery && position.calls.length > 0) return Math.min(MAX_ITERATIONS, position.calls.length + left);
  return left;
}


/** Two steps of one session's run at once: the second is refused, as a conflict the client can retry. */
function conflictOnConcurrentStep(error: unknown, traceId: string): unknown {
  if (error instanceof RedflowError && error.code === ErrorCode.LOG_CONCURRENT_WRITER) {
    return new ApiError(errorInfo(ErrorCode.REACT_STEP_HISTORY_CONFLICT, `another step of session run ${traceId} is under way`, { hint: 'send the next step once the last one has answered' }));
  }
  return error;
}
