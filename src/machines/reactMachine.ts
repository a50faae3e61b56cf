import { assign, emit, fromCallback, sendTo, setup } from 'xstate';
import type {
  MemoryRequestedData,
  ModelAnsweredData,
  ModelResponse,
  RunEndedData,
  RunEnding,
  RunOutcome,
  ToolCompletedData,
  ToolRequestedData,
} from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { validateModelAnswer } from '../validation/validateModelAnswer.js';
import { answerForLog } from '../validation/answerForLog.js';
import { Outcome } from './outcomes.js';
import { buildMessages, buildSystemPrompt } from './prompt.js';
import type {
  FactEmitted,
  ReactContext,
  ReactEvent,
  ReactMachineInput,
  ResumeAt,
  TransportActorInput,
  TransportCommand,
} from './reactTypes.js';
import { confidenceThreshold, iterationLimit, lastConfidence } from './stopConditions.js';
import { ReactState } from './reactState.js';

export { ReactState } from './reactState.js';

/** The data of `run.completed` for a final answer (the thought only in debug). */
function finalAnswerData(answer: ModelResponse, debug: boolean | undefined): RunEndedData {
  const data: RunEndedData = { outcome: Outcome.finalAnswer(answer.message) };
  if (answer.confidence !== undefined) data.confidence = answer.confidence;
  if (debug && answer.thought !== undefined) data.thought = answer.thought;
  return data;
}

/** A run that ends with `outcome`: `run.completed` when it produced what it could, else `run.failed`. */
function ending(type: RunEnding['type'], outcome: RunOutcome): RunEnding {
  return { type, data: { outcome } };
}

/** The save of the run's turn (what the memory actor is asked, and what `memory.requested` logs). */
function memoryRequest(context: ReactContext, memory: NonNullable<ReactContext['settings']['memory']>, end: RunEnding): MemoryRequestedData {
  const { outcome } = end.data;
  const turn: MemoryRequestedData['turn'] = { input: context.envelope.input, outcome: outcome.status, traceId: context.settings.traceId };
  if (outcome.answer !== undefined) turn.answer = outcome.answer;
  return { conversationId: memory.conversationId, turn, maxTurns: memory.maxTurns, ending: end };
}

/**
 * Records one fact: the envelope becomes `evolve(envelope, fact)`, and the `emitFact` action that
 * follows every record action hands the same fact to the recorder, which stamps and appends it.
 * So the live envelope is the fold of the log by construction.
 */
function record(context: ReactContext, fact: RecordedFact): Pick<ReactContext, 'envelope' | 'lastFact'> {
  return { envelope: evolve(context.envelope, fact), lastFact: fact };
}

/**
 * The REACT statechart (docs/architecture.md): awaitingModel → validating → awaitingTool →
 * checkingStop → awaitingModel | concluding, and concluding from anywhere on an error, an abort
 * or the timeout; concluding → (savingMemory → concluding) → done | error. It only orchestrates, validates and routes: every
 * effect goes through the long-lived `transport` actor it invokes, which the host provides with
 * `reactMachine.provide({ actors: { transport } })`. It reads no clock and sets no timer: the
 * host sends `timeout` when the run's time is up, and `abort` to stop it; ids come from the input.
 * No I/O is imported here.
 *
 * @example
 * ```ts
 * const actor = createActor(reactMachine.provide({ actors: { transport } }), { input });
 * actor.on('fact', ({ fact }) => recorder.record(fact));
 * actor.start();
 * ```
 */
export const reactMachine = setup({
  types: {
    context: {} as ReactContext,
    events: {} as ReactEvent,
    input: {} as ReactMachineInput,
    emitted: {} as FactEmitted,
  },
  actors: {
    /** Placeholder: the host must provide the transport actor. */
    transport: fromCallback<TransportCommand, TransportActorInput>(({ sendBack, receive }) => {
      receive((command) => {
        const error = errorInfo(ErrorCode.TRANSPORT_NO_RESPONDER, 'the machine was started without a transport actor', {
          hint: 'provide one with reactMachine.provide({ actors: { transport } })',
        });
        if (command.type === 'model.request') sendBack({ type: 'model.failure', error, durationMs: 0 });
        else if (command.type === 'tool.request') sendBack({ type: 'tool.result', result: { ok: false, error }, durationMs: 0 });
        else sendBack({ type: 'memory.failure', error, durationMs: 0 });
      });
    }),
  },
  guards: {
    resumesAt: ({ context }, params: { at: ResumeAt }) => context.settings.resume?.at === params.at,
    answerIsInvalid: ({ context }) => context.validation?.ok === false,
    answerIsFinal: ({ context }) => context.validation?.ok === true && context.validation.answer.action === 'final',
    confidenceThresholdReached: ({ context }) => {
      const threshold = confidenceThreshold(context.settings.agent);
      const confidence = lastConfidence(context.envelope);
      return threshold !== undefined && confidence !== undefined && confidence >= threshold;
    },
    iterationLimitReached: ({ context }) => context.envelope.state.iteration >= iterationLimit(context.settings.agent).limit,
    savesMemory: ({ context }) => context.settings.memory !== undefined && !context.memoryDone,
    endsInFailure: ({ context }) => context.ending?.type === AgentEventType.RunFailed,
  },
  actions: {
    emitFact: emit(({ context }): FactEmitted => ({ type: 'fact', fact: context.lastFact as RecordedFact })),
    recordRunStarted: assign(({ context }) => {
      const { run } = context.settings;
      const data: Extract<RecordedFact, { type: 'run.started' }>['data'] = {
        input: run.input,
        startedAt: run.startedAt,
        agent: context.settings.agent,
        tools: [...context.settings.tools],
        ...(run.memory !== undefined && { memory: run.memory }),
        ...(run.conversationId !== undefined && { conversationId: run.conversationId }),
        ...(run.flow !== undefined && { flow: run.flow }),
      };
      return record(context, { type: AgentEventType.RunStarted, iteration: 0, data });
    }),
    recordRunResumed: assign(({ context }) => {
      return record(context, {
        type: AgentEventType.RunResumed,
        iteration: context.envelope.state.iteration,
        data: { afterSeq: context.settings.resume?.afterSeq ?? 0 },
      });
    }),
    recordModelRequested: assign(({ context }) => {
      return record(context, {
        type: AgentEventType.ModelRequested,
        iteration: context.envelope.state.iteration + 1,
        data: { prompt: context.settings.systemPrompt },
      });
    }),
    sendModelRequest: sendTo('transport', ({ context }): TransportCommand => ({
      type: 'model.request',
      request: {
        traceId: context.settings.traceId,
        iteration: context.envelope.state.iteration,
        messages: buildMessages(context.settings.systemPrompt, context.envelope),
      },
    })),
    recordModelAnswered: assign(({ context, event }) => {
      if (event.type !== 'model.answer') return {};
      const { rules, agent } = context.settings;
      const tooLong = event.text.length > rules.limits.maxChars;
      // Judged here rather than on entering `validating`: one context update less per iteration.
      const validation = validateModelAnswer(event.text, rules);
      // An oversized answer is logged cut, with its length, so a resumed run judges it the same
      // way; a thought is left out unless in debug.
      const logged = answerForLog(event.text, validation, rules, agent.debug === true);
      const data: ModelAnsweredData = { text: logged.text, durationMs: event.durationMs };
      if (tooLong) data.originalLength = event.text.length;
      data.attempts = event.attempts;
      if (event.usage !== undefined) data.usage = event.usage;
      if (logged.thoughtHidden) data.thoughtHidden = true;
      if (logged.rejection !== undefined) data.rejection = logged.rejection;
      const fact: RecordedFact = { type: AgentEventType.ModelAnswered, iteration: context.envelope.state.iteration, data };
      return {
        envelope: evolve(context.envelope, fact),
        lastFact: fact,
        validation,
        answerLength: tooLong ? event.text.length : undefined,
      };
    }),
    endWithModelFailure: assign(({ event }) => {
      if (event.type !== 'model.failure') return {};
      return { ending: ending(AgentEventType.RunFailed, Outcome.modelFailed(event.error)) };
    }),
    validateAnswer: assign({
      validation: ({ context }) => {
        const rejection = context.settings.resume?.rejection;
        if (rejection !== undefined) return { ok: false, error: rejection };
        const logged = context.envelope.model?.lastResponse;
        const text = typeof logged === 'string' ? logged : '';
        return validateModelAnswer(text, context.settings.rules, context.answerLength ?? text.length);
      },
    }),
    endWithRejectedAnswer: assign(({ context }) => {
      if (context.validation?.ok !== false) return {};
      return { ending: ending(AgentEventType.RunFailed, Outcome.invalidAnswer(context.validation.error)) };
    }),
    endWithFinalAnswer: assign(({ context }) => {
      if (context.validation?.ok !== true) return {};
      return { ending: { type: AgentEventType.RunCompleted, data: finalAnswerData(context.validation.answer, context.settings.agent.debug) } };
    }),
    recordToolRequested: assign(({ context }) => {
      if (context.validation?.ok !== true) return {};
      const { answer } = context.validation;
      const iteration = context.envelope.state.iteration;
      const data: ToolRequestedData = {
        tool: answer.tool as string,
        input: (answer.input ?? {}) as ToolRequestedData['input'],
        confidence: answer.confidence as number,
        // One tool call per iteration, so trace and iteration identify the call, and a call
        // re-sent after a crash carries the same key.
        idempotencyKey: `${context.settings.traceId}:${iteration}`,
      };
      if (answer.message !== undefined) data.message = answer.message;
      if (context.settings.agent.debug && answer.thought !== undefined) data.thought = answer.thought;
      return record(context, { type: AgentEventType.ToolRequested, iteration, data });
    }),
    sendToolRequest: sendTo('transport', ({ context }): TransportCommand => {
      const { history } = context.envelope.tools;
      const call = history[history.length - 1];
      return {
        type: 'tool.request',
        request: {
          traceId: context.settings.traceId,
          iteration: call?.iteration ?? context.envelope.state.iteration,
          tool: call?.tool ?? '',
          input: (call?.input ?? {}) as Record<string, unknown>,
          idempotencyKey: call?.idempotencyKey ?? '',
        },
      };
    }),
    recordToolCompleted: assign(({ context, event }) => {
      if (event.type !== 'tool.result') return {};
      const { history } = context.envelope.tools;
      const call = history[history.length - 1];
      const { result } = event;
      const data: ToolCompletedData = { tool: call?.tool ?? '', idempotencyKey: call?.idempotencyKey ?? '', ok: result.ok, durationMs: 0 };
      if (result.ok) data.output = result.output;
      else data.error = result.error;
      data.durationMs = event.durationMs;
      return record(context, { type: AgentEventType.ToolCompleted, iteration: context.envelope.state.iteration, data });
    }),
    endWithConfidenceStop: assign(({ context }) => ({
      ending: ending(
        AgentEventType.RunCompleted,
        Outcome.confidenceReached(confidenceThreshold(context.settings.agent) ?? 1, lastConfidence(context.envelope) ?? 1, context.envelope),
      ),
    })),
    endWithIterationLimit: assign(({ context }) => {
      const { limit, byCondition } = iterationLimit(context.settings.agent);
      return { ending: ending(AgentEventType.RunCompleted, Outcome.iterationLimit(limit, byCondition)) };
    }),
    endWithTimeout: assign(({ context }) => ({ ending: ending(AgentEventType.RunFailed, Outcome.timedOut(context.settings.timeoutMs)) })),
    endWithAbort: assign(({ event }) => ({
      ending: ending(AgentEventType.RunFailed, Outcome.aborted(event.type === 'abort' ? event.reason : undefined)),
    })),
    recordMemoryRequested: assign(({ context }) => {
      const { memory } = context.settings;
      if (memory === undefined || context.ending === undefined) return {};
      const data = memoryRequest(context, memory, context.ending);
      return {
        ...record(context, { type: AgentEventType.MemoryRequested, iteration: context.envelope.state.iteration, data }),
        memoryRequested: data,
      };
    }),
    sendMemoryRequest: sendTo('transport', ({ context }): TransportCommand => {
      // savingMemory is entered only with the save requested (recorded, or read from the log).
      const { conversationId, turn, maxTurns } = context.memoryRequested as MemoryRequestedData;
      return { type: 'memory.request', request: { conversationId, turn, maxTurns } };
    }),
    recordMemorySaved: assign(({ context, event }) => {
      if (event.type !== 'memory.saved') return {};
      return {
        ...record(context, { type: AgentEventType.MemorySaved, iteration: context.envelope.state.iteration, data: { durationMs: event.durationMs } }),
        memoryDone: true,
      };
    }),
    endWithMemoryFailure: assign(({ context, event }) => {
      if (event.type !== 'memory.failure') return {};
      return { ending: ending(AgentEventType.RunFailed, Outcome.memoryFailed(event.error, context.ending?.data.outcome)), memoryDone: true };
    }),
    recordEnding: assign(({ context }) => {
      if (context.ending === undefined) return {};
      const { type, data } = context.ending;
      const iteration = context.envelope.state.iteration;
      return record(context, type === AgentEventType.RunCompleted ? { type, iteration, data } : { type: AgentEventType.RunFailed, iteration, data });
    }),
  },
}).createMachine({
  id: 'react',
  context: ({ input }) => ({
    settings: {
      traceId: input.traceId,
      agent: input.agent,
      tools: input.tools,
      rules: input.rules,
      systemPrompt: buildSystemPrompt(input.tools, input.agent.instructions),
      run: input.run,
      timeoutMs: input.timeoutMs,
      resume: input.resume,
      memory: input.memory,
      effects: input.effects,
    },
    envelope: input.resume?.envelope ?? emptyEnvelope(input.traceId),
    validation: undefined,
    answerLength: input.resume?.answerLength,
    lastFact: undefined,
    ending: input.resume?.memoryRequested?.ending,
    memoryRequested: input.resume?.memoryRequested,
    memoryDone: input.resume?.at === 'concluding',
  }),
  invoke: {
    id: 'transport',
    src: 'transport',
    input: ({ context }): TransportActorInput => ({ traceId: context.settings.traceId, effects: context.settings.effects }),
  },
  initial: ReactState.Starting,
  // Both come from outside: the host owns the clock, so the run timeout is its timer, not ours.
  on: {
    abort: { target: `.${ReactState.Concluding}`, actions: 'endWithAbort' },
    timeout: { target: `.${ReactState.Concluding}`, actions: 'endWithTimeout' },
  },
  states: {
    [ReactState.Starting]: {
      always: [
        {
          guard: { type: 'resumesAt', params: { at: 'model' } },
          target: ReactState.AwaitingModel,
          actions: ['recordRunResumed', 'emitFact', 'recordModelRequested', 'emitFact'],
        },
        {
          guard: { type: 'resumesAt', params: { at: 'modelResend' } },
          target: ReactState.AwaitingModel,
          actions: ['recordRunResumed', 'emitFact'],
        },
        {
          guard: { type: 'resumesAt', params: { at: 'validating' } },
          target: ReactState.Validating,
          actions: ['recordRunResumed', 'emitFact', 'validateAnswer'],
        },
        {
          guard: { type: 'resumesAt', params: { at: 'toolResend' } },
          target: ReactState.AwaitingTool,
          actions: ['recordRunResumed', 'emitFact'],
        },
        {
          guard: { type: 'resumesAt', params: { at: 'checkingStop' } },
          target: ReactState.CheckingStop,
          actions: ['recordRunResumed', 'emitFact'],
        },
        {
          guard: { type: 'resumesAt', params: { at: 'memoryResend' } },
          target: ReactState.SavingMemory,
          actions: ['recordRunResumed', 'emitFact'],
        },
        {
          guard: { type: 'resumesAt', params: { at: 'concluding' } },
          target: ReactState.Concluding,
          actions: ['recordRunResumed', 'emitFact'],
        },
        { target: ReactState.AwaitingModel, actions: ['recordRunStarted', 'emitFact', 'recordModelRequested', 'emitFact'] },
      ],
    },
    [ReactState.AwaitingModel]: {
      entry: 'sendModelRequest',
      on: {
        'model.answer': { target: ReactState.Validating, actions: ['recordModelAnswered', 'emitFact'] },
        'model.failure': { target: ReactState.Concluding, actions: 'endWithModelFailure' },
      },
    },
    [ReactState.Validating]: {
      always: [
        { guard: 'answerIsInvalid', target: ReactState.Concluding, actions: 'endWithRejectedAnswer' },
        { guard: 'answerIsFinal', target: ReactState.Concluding, actions: 'endWithFinalAnswer' },
        { target: ReactState.AwaitingTool, actions: ['recordToolRequested', 'emitFact'] },
      ],
    },
    [ReactState.AwaitingTool]: {
      entry: 'sendToolRequest',
      on: {
        'tool.result': { target: ReactState.CheckingStop, actions: ['recordToolCompleted', 'emitFact'] },
      },
    },
    [ReactState.CheckingStop]: {
      always: [
        { guard: 'confidenceThresholdReached', target: ReactState.Concluding, actions: 'endWithConfidenceStop' },
        { guard: 'iterationLimitReached', target: ReactState.Concluding, actions: 'endWithIterationLimit' },
        { target: ReactState.AwaitingModel, actions: ['recordModelRequested', 'emitFact'] },
      ],
    },
    // Every ending passes here: the conversation's memory is saved as a step of its own (logged,
    // and resumed like any other effect) before the terminal event, so no turn is lost to a crash.
    [ReactState.Concluding]: {
      always: [
        { guard: 'savesMemory', target: ReactState.SavingMemory, actions: ['recordMemoryRequested', 'emitFact'] },
        { guard: 'endsInFailure', target: ReactState.Error, actions: ['recordEnding', 'emitFact'] },
        { target: ReactState.Done, actions: ['recordEnding', 'emitFact'] },
      ],
    },
    [ReactState.SavingMemory]: {
      entry: 'sendMemoryRequest',
      on: {
        'memory.saved': { target: ReactState.Concluding, actions: ['recordMemorySaved', 'emitFact'] },
        'memory.failure': { target: ReactState.Concluding, actions: 'endWithMemoryFailure' },
        // The ending is decided; the save is bounded by the memory call's own timeout.
        abort: {},
        timeout: {},
      },
    },
    [ReactState.Done]: { type: 'final' },
    [ReactState.Error]: { type: 'final' },
  },
});

