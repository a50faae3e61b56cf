import { assign, emit, fromCallback, sendTo, setup } from 'xstate';
import type {
  ModelAnsweredData,
  ModelResponse,
  RunEndedData,
  ToolCompletedData,
  ToolRequestedData,
} from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { validateModelAnswer } from '../validation/validateModelAnswer.js';
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

/**
 * Records one fact: the envelope becomes `evolve(envelope, fact)`, and the `emitFact` action that
 * follows every record action hands the same fact to the recorder, which stamps and appends it.
 * So the live envelope is the fold of the log by construction.
 */
function record(context: ReactContext, fact: RecordedFact): Pick<ReactContext, 'envelope' | 'lastFact'> {
  return { envelope: evolve(context.envelope, fact), lastFact: fact };
}

/**
 * The REACT statechart (DESIGN.md): awaitingModel → validating → awaitingTool → checkingStop →
 * awaitingModel | done, and error from anywhere. It only orchestrates, validates and routes: every
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
        else sendBack({ type: 'tool.result', result: { ok: false, error }, durationMs: 0 });
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
      const max = context.settings.rules.limits.maxChars;
      const tooLong = event.text.length > max;
      // An oversized answer is logged cut, with its length, so replay judges it the same way.
      const data: ModelAnsweredData = { text: tooLong ? event.text.slice(0, 1024) : event.text, durationMs: event.durationMs };
      if (tooLong) data.originalLength = event.text.length;
      data.attempts = event.attempts;
      if (event.usage !== undefined) data.usage = event.usage;
      const fact: RecordedFact = { type: AgentEventType.ModelAnswered, iteration: context.envelope.state.iteration, data };
      return {
        envelope: evolve(context.envelope, fact),
        lastFact: fact,
        // Judged here rather than on entering `validating`: one context update less per iteration.
        validation: validateModelAnswer(event.text, context.settings.rules),
        answerLength: tooLong ? event.text.length : undefined,
      };
    }),
    recordModelFailed: assign(({ context, event }) => {
      if (event.type !== 'model.failure') return {};
      return record(context, {
        type: AgentEventType.RunFailed,
        iteration: context.envelope.state.iteration,
        data: { outcome: Outcome.modelFailed(event.error) },
      });
    }),
    validateAnswer: assign({
      validation: ({ context }) => {
        const logged = context.envelope.model?.lastResponse;
        const text = typeof logged === 'string' ? logged : '';
        return validateModelAnswer(text, context.settings.rules, context.answerLength ?? text.length);
      },
    }),
    recordAnswerRejected: assign(({ context }) => {
      if (context.validation?.ok !== false) return {};
      return record(context, {
        type: AgentEventType.RunFailed,
        iteration: context.envelope.state.iteration,
        data: { outcome: Outcome.invalidAnswer(context.validation.error) },
      });
    }),
    recordFinalAnswer: assign(({ context }) => {
      if (context.validation?.ok !== true) return {};
      const { answer } = context.validation;
      return record(context, {
        type: AgentEventType.RunCompleted,
        iteration: context.envelope.state.iteration,
        data: finalAnswerData(answer, context.settings.agent.debug),
      });
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
    recordConfidenceStop: assign(({ context }) => {
      return record(context, {
        type: AgentEventType.RunCompleted,
        iteration: context.envelope.state.iteration,
        data: {
          outcome: Outcome.confidenceReached(confidenceThreshold(context.settings.agent) ?? 1, lastConfidence(context.envelope) ?? 1),
        },
      });
    }),
    recordIterationLimit: assign(({ context }) => {
      const { limit, byCondition } = iterationLimit(context.settings.agent);
      return record(context, {
        type: AgentEventType.RunCompleted,
        iteration: context.envelope.state.iteration,
        data: { outcome: Outcome.iterationLimit(limit, byCondition) },
      });
    }),
    recordTimedOut: assign(({ context }) => {
      return record(context, {
        type: AgentEventType.RunFailed,
        iteration: context.envelope.state.iteration,
        data: { outcome: Outcome.timedOut(context.settings.timeoutMs) },
      });
    }),
    recordAborted: assign(({ context, event }) => {
      return record(context, {
        type: AgentEventType.RunFailed,
        iteration: context.envelope.state.iteration,
        data: { outcome: Outcome.aborted(event.type === 'abort' ? event.reason : undefined) },
      });
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
      effects: input.effects,
    },
    envelope: input.resume?.envelope ?? emptyEnvelope(input.traceId),
    validation: undefined,
    answerLength: input.resume?.answerLength,
    lastFact: undefined,
  }),
  invoke: {
    id: 'transport',
    src: 'transport',
    input: ({ context }): TransportActorInput => ({ traceId: context.settings.traceId, effects: context.settings.effects }),
  },
  initial: ReactState.Starting,
  // Both come from outside: the host owns the clock, so the run timeout is its timer, not ours.
  on: {
    abort: { target: `.${ReactState.Error}`, actions: ['recordAborted', 'emitFact'] },
    timeout: { target: `.${ReactState.Error}`, actions: ['recordTimedOut', 'emitFact'] },
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
        { target: ReactState.AwaitingModel, actions: ['recordRunStarted', 'emitFact', 'recordModelRequested', 'emitFact'] },
      ],
    },
    [ReactState.AwaitingModel]: {
      entry: 'sendModelRequest',
      on: {
        'model.answer': { target: ReactState.Validating, actions: ['recordModelAnswered', 'emitFact'] },
        'model.failure': { target: ReactState.Error, actions: ['recordModelFailed', 'emitFact'] },
      },
    },
    [ReactState.Validating]: {
      always: [
        { guard: 'answerIsInvalid', target: ReactState.Error, actions: ['recordAnswerRejected', 'emitFact'] },
        { guard: 'answerIsFinal', target: ReactState.Done, actions: ['recordFinalAnswer', 'emitFact'] },
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
        { guard: 'confidenceThresholdReached', target: ReactState.Done, actions: ['recordConfidenceStop', 'emitFact'] },
        { guard: 'iterationLimitReached', target: ReactState.Done, actions: ['recordIterationLimit', 'emitFact'] },
        { target: ReactState.AwaitingModel, actions: ['recordModelRequested', 'emitFact'] },
      ],
    },
    [ReactState.Done]: { type: 'final' },
    [ReactState.Error]: { type: 'final' },
  },
});

