import type { AgentCoreReactConfig, AgentEnvelope, HistoryMessage, RunOutcome, ToolSpec } from '../contracts/schema-types.js';
import { ApiError, ErrorCode, errorInfo, type ErrorInfo, RedflowError } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { createRunPathCheck } from '../events/runPath.js';
import { logStatus } from '../events/resumePoint.js';
import type { StepLogs } from './stepLogs.js';
import type { ModelActor } from '../actors/model.js';
import type { ToolResult } from '../actors/tool.js';
import { answerWaitingRun, settleRun, type RunSettlement } from '../host/answerWaitingRun.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { serveActors } from '../runtime/embeddedActors.js';
import type { RunHandle } from '../runtime/runSession.js';
import { startRun } from '../host/admission.js';
import { agentFor, contextBudgetFor, sessionBudgetLeft } from './stepAgent.js';
import { limitToolResult } from '../runtime/dataLimits.js';
import { redactReply } from '../runtime/redactReply.js';
import { parseTextAction, parseToolSignatures, type ToolSignature } from '../validation/actionSyntax.js';
import { looksLikeJson } from '../validation/validateTextAnswer.js';
import { buildSystemPrompt } from '../machines/prompt.js';
import { waitTimeoutOf } from '../events/waits.js';
import { fitStepContext } from './fitStepContext.js';
import { historyLimitProblem } from './historyLimits.js';
import type { ConversationTurn, ReactStepRequest, ReactStepResponse } from './reactStepTypes.js';
import { asRecorded, matchHistory, matchQuery, observationOf, sessionPosition, sessionTraceId, type ClientCall, type ClientObservation, type SessionPosition } from './sessionTurns.js';
import { gatherStepContext, renderContext } from './workspaceContext.js';

/** Model calls a session's query may make when the step does not say (`max_iterations_left`). */
export const DEFAULT_STEP_ITERATIONS = 5;

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

/** The answer of a step: where the run stands after it, told in the session's terms. */
function respond(
  step: StepRun,
  envelope: AgentEnvelope,
  events: readonly AgentEvent[],
  known: number,
  liveAnswer: string | undefined,
): ReactStepResponse {
  const { request, position, traceId } = step;
  const calls = envelope.tools.history;
  const history: ConversationTurn[] = position.newQuery ? [...request.conversation_history] : asRecorded(request.conversation_history, calls);
  // The query was asked when its run began: its turn comes before the model's, even in a retry.
  const asked = events[0]?.type === 'run.started' ? events[0].time : new Date(step.clock.now()).toISOString();
  if (position.newQuery) history.push({ role: 'user', content: position.query, timestamp: asked });
  const answers = events.filter((event) => event.type === 'model.answered');
  const requested = events.filter((event) => event.type === 'tool.requested');
  for (let i = known; i < calls.length; i += 1) {
    const call = calls[i];
    if (call === undefined) continue;
    const at = requested[i];
    history.push({ role: 'assistant', content: '', toolCall: { name: call.tool, parameters: call.input as Record<string, unknown> }, ...(at !== undefined && { timestamp: at.time }) });
  }
  const limit = (events[0]?.type === 'run.started' ? events[0].data.agent.maxIterations : undefined) ?? DEFAULT_STEP_ITERATIONS;
  const remaining = Math.max(0, limit - envelope.state.iteration);
  const outcome: RunOutcome | undefined = envelope.observability.outcome;
  const lastText = liveAnswer ?? lastLoggedText(answers);
  const thought = liveAnswer === undefined ? null : thoughtOf(liveAnswer);
  const { usage } = envelope.observability;
  const base = { session_id: request.session_id, trace_id: traceId, thought, updated_conversation_history: history, iterations_remaining: remaining, ...(usage !== undefined && { usage }) };
  if (outcome === undefined) {
    const call = calls[calls.length - 1];
    if (call === undefined || call.status !== 'requested') {
      return { ...base, action_details: null, direct_response: null, status: 'error', error: errorInfo(ErrorCode.RUN_NOT_WAITING, `run ${traceId} is neither waiting for a tool nor ended`) };
    }
    const last = history[history.length - 1];
    if (last?.role === 'assistant' && thought !== null) history[history.length - 1] = { ...last, content: thought };
    return {
      ...base,
      action_details: { tool_name: call.tool, tool_args: call.input as Record<string, unknown>, raw_action_string: rawAction(lastText, call.tool, call.input) },
      direct_response: null,
      status: 'action_proposed',
    };
  }
  // A question for the user is what the step says: the user answers it with the next query.
  const said = outcome.question?.question ?? (outcome.status === 'done' || outcome.status === 'done_partial' ? outcome.answer : undefined);
  if (said !== undefined && said !== '') {
    const at = events[events.length - 1]?.time;
    history.push({ role: 'assistant', content: said, ...(at !== undefined && { timestamp: at }) });
    return { ...base, action_details: null, direct_response: said, status: 'direct_response_provided' };
  }
  if (outcome.handoff !== undefined) {
    const { agentId, task } = outcome.handoff;
    const error = errorInfo(ErrorCode.RUN_DELEGATED, `the model handed the task to agent ${agentId}: ${task}`, { hint: 'this service runs one agent: give that task to the agent named, or ask again' });
    return { ...base, action_details: null, direct_response: null, status: 'error', error: { code: error.code, message: error.message, ...(error.hint !== undefined && { hint: error.hint }) } };
  }
  const error = (outcome.error as ErrorInfo | undefined) ?? errorInfo(ErrorCode.ITERATION_OVERFLOW, `the run ended ${outcome.status} without an answer`);
  return { ...base, action_details: null, direct_response: null, status: 'error', error: { code: error.code, message: error.message, ...(error.hint !== undefined && { hint: error.hint }) } };
}

function lastLoggedText(answers: readonly AgentEvent[]): string | undefined {
  const last = answers[answers.length - 1];
  return last?.type === 'model.answered' ? last.data.text : undefined;
}

/** The model's thought in its answer, JSON or text form. */
function thoughtOf(text: string): string | null {
  if (looksLikeJson(text)) {
    try {
      const parsed = JSON.parse(text) as { thought?: unknown };
      return typeof parsed.thought === 'string' ? parsed.thought : null;
    } catch {
      return null;
    }
  }
  return parseTextAction(text).thought ?? null;
}

/** The action as the model wrote it: its `Action:` text, or its JSON answer. */
function rawAction(text: string | undefined, tool: string, input: unknown): string {
  if (text === undefined || text === '') return JSON.stringify({ action: 'tool', tool, input });
  if (looksLikeJson(text)) return text.trim();
  const read = parseTextAction(text);
  return read.kind === 'tool' ? read.raw : text.trim();
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

/** The answer to a query its client gave no iteration (`max_iterations_left: 0`), or whose session spent its budget. */
function noIterationLeft(step: StepRun, spent?: ErrorInfo): ReactStepResponse {
  const { request, position } = step;
  const asked: ConversationTurn[] = position.newQuery ? [{ role: 'user', content: position.query, timestamp: new Date(step.clock.now()).toISOString() }] : [];
  const error =
    spent ??
    errorInfo(ErrorCode.ITERATION_OVERFLOW, 'the step has no iteration left (max_iterations_left is 0): the model was not asked', {
      hint: 'send the query with max_iterations_left of 1 or more',
    });
  return {
    session_id: request.session_id,
    thought: null,
    action_details: null,
    direct_response: null,
    updated_conversation_history: [...request.conversation_history, ...asked],
    iterations_remaining: 0,
    status: 'error',
    error: { code: error.code, message: error.message, ...(error.hint !== undefined && { hint: error.hint }) },
  };
}

/** Earlier turns as the model is shown them: observations as the user's messages. */
function historyMessages(turns: readonly ConversationTurn[]): HistoryMessage[] {
  return turns.map((turn) => {
    if (turn.role === 'tool_observation') return { role: 'user', content: `Observation${turn.toolCall ? ` from ${turn.toolCall.name}` : ''}:\n${observationText(turn)}` };
    if (turn.role === 'assistant' && turn.toolCall !== undefined) {
      return { role: 'assistant', content: JSON.stringify({ action: 'tool', tool: turn.toolCall.name, input: turn.toolCall.parameters }) };
    }
    return { role: turn.role === 'assistant' ? 'assistant' : 'user', content: turn.content };
  });
}

/**
 * An earlier query's observation as the model reads it, as its own run showed it: the client's
 * text and the tool's result (observationOf), one past the reply limits as the call's failure.
 */
function observationText(turn: ConversationTurn): string {
  const result = limitToolResult(toolResult(observationOf(turn)), turn.toolCall?.name ?? 'tool');
  if (!result.ok) return `error ${result.error.code}: ${result.error.message}`;
  return typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
}

function toolResult(observation: ClientObservation): ToolResult {
  if (observation.ok) return { ok: true, output: observation.output };
  return { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, observation.error ?? observation.content, { hint: 'the client ran the tool and it failed' }) };
}

/** A history calling a tool this step's list does not name cannot be a run of this step: 400, before anything is recorded. */
function refuseUnlisted(position: SessionPosition, agent: AgentCoreReactConfig): void {
  const unlisted = position.calls.find((call) => !agent.allowedTools.includes(call.tool));
  if (unlisted === undefined) return;
  throw new ApiError(
    errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, `the history calls ${unlisted.tool}, which available_tools_prompt_segment does not list`, {
      path: '/conversation_history',
      hint: 'a history names only tools of available_tools_prompt_segment; send it as the last answer gave it',
    }),
  );
}

/**
 * An observation as a run records a client's reply (see answerEvent in runtime/runSession.ts): cut
 * of secrets, and a failure past the reply limits. A rebuilt log holds what the session's own log
 * would have, and the answer gives the client back the same (asRecorded).
 */
function asReply(result: ToolResult, tool: string): ToolResult {
  const reply = redactReply(result.ok ? { ok: true, data: result.output } : { ok: false, error: result.error });
  return limitToolResult(reply.ok ? { ok: true, output: reply.data } : reply, tool);
}

/** A client's observation as its run records it (asReply), to compare with the log. */
function loggedObservation(observation: ClientObservation, tool: string): ClientObservation {
  const result = asReply(toolResult(observation), tool);
  return result.ok ? { ...observation, output: result.output } : { ...observation, ok: false };
}

/** Two steps of one session's run at once: the second is refused, as a conflict the client can retry. */
function conflictOnConcurrentStep(error: unknown, traceId: string): unknown {
  if (error instanceof RedflowError && error.code === ErrorCode.LOG_CONCURRENT_WRITER) {
    return new ApiError(errorInfo(ErrorCode.REACT_STEP_HISTORY_CONFLICT, `another step of session run ${traceId} is under way`, { hint: 'send the next step once the last one has answered' }));
  }
  return error;
}

/**
 * Writes the log a query's run would have, from the client's history: the start, then each call
 * the history shows (the model's decision, the call, its observation). Used when the server has
 * no log for the session (another server answered its earlier steps, or the log was lost): the
 * client's history is the truth, and the run goes on from it.
 */
async function rebuildFromHistory(
  store: { append(event: AgentEvent): Promise<void> },
  traceId: string,
  position: SessionPosition,
  agent: AgentCoreReactConfig,
  tools: readonly ToolSpec[],
  context: string | undefined,
  clock: Clock,
): Promise<void> {
  const events: AgentEvent[] = [];
  const time = new Date(clock.now()).toISOString();
  const append = (type: AgentEvent['type'], iteration: number, data: unknown) => {
    const seq = events.length + 1;
    events.push({ id: `${traceId}:${seq}`, traceId, seq, time, type, iteration, data } as AgentEvent);
  };
  const history = historyMessages(position.earlierTurns);
  append('run.started', 0, {
    input: position.query,
    startedAt: time,
    agent,
    tools: [...tools],
    ...(history.length > 0 && { history }),
    ...(context !== undefined && { context }),
  });
  const prompt = buildSystemPrompt(tools, agent.instructions);
  for (const [index, call] of position.calls.entries()) {
    const iteration = index + 1;
    const idempotencyKey = `${traceId}:${iteration}`;
    append('model.requested', iteration, { prompt });
    append('model.answered', iteration, { text: JSON.stringify({ action: 'tool', tool: call.tool, input: call.input, confidence: 1 }), durationMs: 0, attempts: 1 });
    append('tool.requested', iteration, { tool: call.tool, input: call.input, confidence: 1, idempotencyKey, wait: { for: 'client', timeoutMs: waitTimeoutOf(agent) } });
    if (call.observation !== undefined && index < position.calls.length - 1) {
      const result = asReply(toolResult(call.observation), call.tool);
      append('tool.completed', iteration, { tool: call.tool, idempotencyKey, ok: result.ok, durationMs: 0, ...(result.ok ? { output: result.output } : { error: result.error }) });
    }
  }
  // A history this step's run could not have (a tool its list does not name, more calls than its
  // iterations) is the client's mistake: refused before anything is written, so no half-built
  // log is left to refuse the session's later steps.
  const path = createRunPathCheck();
  for (const event of events) {
    const impossible = path.next(event);
    if (impossible !== undefined) {
      throw new ApiError(
        errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, `the history cannot be a run of this step: ${impossible}`, {
          path: '/conversation_history',
          hint: 'a history names only tools of available_tools_prompt_segment, at most max_iterations_left calls; send it as the last answer gave it',
        }),
      );
    }
  }
  for (const event of events) await store.append(event);
}
