import { assertEvent, assign, enqueueActions, fromCallback, sendTo, setup } from 'xstate';
import type {
  Handoff,
  HumanQuestion,
  HumanRequestedData,
  MemoryRequestedData,
  ModelAnsweredData,
  ModelRequestedData,
  RunEnding,
} from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { evolve } from '../events/evolve.js';
import { validateModelAnswer, type AnswerPosition } from '../validation/validateModelAnswer.js';
import { answerForLog } from '../validation/answerForLog.js';
import { Outcome, ending, finalAnswerData } from './outcomes.js';
import { Verifying } from './verification.js';
import { answerBudgetStop, firstCallBudgetStop, modelMessages, nextCallBudgetStop, nextRequestTokens, repairBudgetStop, repairFact, runStartedFact } from './prompt.js';
import type {
  FactEmitted,
  ReactContext,
  ReactEvent,
  ReactMachineInput,
  ResumeAt,
  TransportActorInput,
  TransportCommand,
} from './reactTypes.js';
import { answerRepairs, confidenceThreshold, iterationLimit, lastConfidence } from '../events/stopConditions.js';
import { needsApproval, runsOnClient, waitForHuman, waitTimeoutOf } from '../events/waits.js';
import { ToolCalls, validAnswer } from './toolCalls.js';
import { modelSwitch } from './modelSwitch.js';
import { budgetExhausted, meteredUsage } from './contextBudget.js';


/** The save of the run's turn (what the memory actor is asked, and what `memory.requested` logs). */
function memoryRequest(context: ReactContext, memory: NonNullable<ReactContext['settings']['memory']>, end: RunEnding): MemoryRequestedData {
  const { outcome } = end.data;
  const turn: MemoryRequestedData['turn'] = { input: context.envelope.input, outcome: outcome.status, traceId: context.settings.traceId };
  if (outcome.answer !== undefined) turn.answer = outcome.answer;
  return { conversationId: memory.conversationId, turn, maxTurns: memory.maxTurns, ending: end };
}

/** What a recording action records: the fact, and what else of the context changes with it. */
interface Recorded {
  readonly fact: RecordedFact;
  readonly more: Partial<ReactContext> | undefined;
}

/** The fact a recording action records (with `more` of the context): see {@link recording}. */
function record(fact: RecordedFact, more?: Partial<ReactContext>): Recorded {
  return { fact, more };
}

/** {@link record}, when there is a fact to record. */
function recordIf(fact: RecordedFact | undefined): Recorded | undefined {
  return fact === undefined ? undefined : record(fact);
}

/**
 * A recording action: records the fact `factOf` gives (if any) in one step. The envelope becomes
 * `evolve(envelope, fact)`, and the fact is emitted for the host's recorder to stamp and append,
 * so the live envelope is the fold of the log by construction.
 */
function recording(factOf: (args: { readonly context: ReactContext; readonly event: ReactEvent }) => Recorded | undefined) {
  return enqueueActions<ReactContext, ReactEvent, undefined, ReactEvent, never, never, never, never, FactEmitted>(({ context, event, enqueue }) => {
    const recorded = factOf({ context, event });
    if (recorded === undefined) return;
    const envelope = evolve(context.envelope, recorded.fact);
    enqueue.assign(recorded.more === undefined ? { envelope } : { envelope, ...recorded.more });
    enqueue.emit({ type: 'fact', fact: recorded.fact });
  });
}

/** Where the answer being judged comes: every iteration but the first follows an observation. */
function positionOf(context: ReactContext, reasoningHidden: boolean): AnswerPosition {
  return { afterObservation: context.envelope.state.iteration > 1, reasoningHidden };
}

/** The tool of the answer being judged, when it calls one. */
function answerTool(context: ReactContext): string | undefined {
  return ToolCalls.ofAnswer(context)?.tool;
}

/** The question the run waits on: the last exchange, asked by the model. */
function openQuestion(context: ReactContext): HumanQuestion {
  const exchanges = context.envelope.exchanges ?? [];
  const asked = exchanges[exchanges.length - 1];
  const question: HumanQuestion = { action: asked?.kind === 'request_info' ? 'request_info' : 'escalate', question: asked?.question ?? '' };
  if (asked?.reason !== undefined) question.reason = asked.reason;
  if (asked?.context !== undefined) question.context = asked.context;
  return question;
}

/**
 * The REACT statechart's types, guards and actions (the chart itself, which reads like the diagram,
 * is `reactMachine.ts`). The guards only read the context; the `record*` actions record one event
 * each (see {@link recording}), the `send*` actions send the transport actor a command, and the
 * `endWith*` actions decide the ending that `concluding` records.
 */
export const reactSetup = setup({
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
    answerGoesToVerification: ({ context }) => Verifying.answerGoesToVerification(context),
    verificationPassed: ({ context }) => Verifying.passed(context),
    verificationsExhausted: ({ context }) => Verifying.exhausted(context),
    resumesAt: ({ context }, params: { at: ResumeAt }) => context.settings.resume?.at === params.at,
    startsNewRun: ({ context }) => context.settings.resume === undefined,
    answerIsInvalid: ({ context }) => context.validation?.ok === false,
    // An answer that breaks the format goes back with its error while repairs (onInvalidAnswer) and iterations are left.
    answerNeedsRepair: ({ context }) => {
      const { validation, settings, envelope } = context;
      if (validation?.ok !== false) return false;
      const { allowed, used } = answerRepairs(settings.agent, envelope);
      return used < allowed && envelope.state.iteration < iterationLimit(settings.agent).limit;
    },
    answerIsFinal: ({ context }) => validAnswer(context)?.action === 'final',
    // One repair turn per run, and only with an iteration left for it.
    outputNeedsRepair: ({ context }) => {
      const { validation, settings, envelope } = context;
      return (
        settings.agent.outputRepair === true &&
        validation?.ok === true &&
        validation.output?.errors !== undefined &&
        !(envelope.exchanges ?? []).some((exchange) => exchange.kind === 'output_repair') &&
        envelope.state.iteration < iterationLimit(settings.agent).limit
      );
    },
    answerAsksPerson: ({ context }) => {
      const action = validAnswer(context)?.action;
      return action === 'escalate' || action === 'request_info';
    },
    // A delegation to a connected subagent is a call of it, like a tool's; any other ends the run.
    answerDelegates: ({ context }) => validAnswer(context)?.action === 'delegate' && ToolCalls.ofAnswer(context) === undefined,
    toolNeedsApproval: ({ context }) => {
      const tool = answerTool(context);
      return tool !== undefined && needsApproval(context.settings.agent, tool);
    },
    toolRunsOnClient: ({ context }) => {
      const tool = answerTool(context);
      return tool !== undefined && runsOnClient(context.settings.tools, tool);
    },
    approvedToolRunsOnClient: ({ context }) => runsOnClient(context.settings.tools, ToolCalls.current(context)?.tool ?? ''),
    confidenceThresholdReached: ({ context }) => {
      const threshold = confidenceThreshold(context.settings.agent);
      const confidence = lastConfidence(context.envelope);
      return threshold !== undefined && confidence !== undefined && confidence >= threshold;
    },
    iterationLimitReached: ({ context }) => context.envelope.state.iteration >= iterationLimit(context.settings.agent).limit,
    firstCallOverBudget: ({ context }) => firstCallBudgetStop(context) !== undefined,
    answerOverBudget: ({ context }) => answerBudgetStop(context) !== undefined,
    nextCallOverBudget: ({ context }) => nextCallBudgetStop(context) !== undefined,
    // A repair's re-ask and the verifier's call are model calls too (docs/budgets.md).
    repairOverBudget: ({ context }) => repairBudgetStop(context) !== undefined,
    verificationOverBudget: ({ context }) => Verifying.budgetStop(context) !== undefined,
    savesMemory: ({ context }) => context.settings.memory !== undefined && !context.memoryDone,
    endsInFailure: ({ context }) => context.ending?.type === AgentEventType.RunFailed,
  },
  actions: {
    // The verifying state's (src/machines/verification.ts).
    recordVerificationRequested: recording(({ context }) => recordIf(Verifying.requested(context))),
    sendVerificationRequest: sendTo('transport', ({ context }): TransportCommand => Verifying.command(context)),
    recordVerificationCompleted: recording(({ context, event }) => {
      assertEvent(event, 'model.answer');
      return record(Verifying.metered(context, event, Verifying.completed(context, event)));
    }),
    endWithVerifiedAnswer: assign(({ context }) => ({ ending: Verifying.verifiedEnding(context) })),
    endWithUnverifiedAnswer: assign(({ context }) => ({ ending: Verifying.unverifiedEnding(context) })),
    recordRunStarted: recording(({ context }) => record(runStartedFact(context))),
    recordRunResumed: recording(({ context }) => {
      return record({
        type: AgentEventType.RunResumed,
        iteration: context.envelope.state.iteration,
        data: { afterSeq: context.settings.resume?.afterSeq ?? 0 },
      });
    }),
    recordModelRequested: recording(({ context }) => {
      const { systemPrompt, contextBudget } = context.settings;
      const data: ModelRequestedData = { prompt: systemPrompt };
      // What is left out to fit the window is decided here and logged, so the log says what the
      // model saw; the send below leaves out the same (fitting is deterministic).
      if (contextBudget !== undefined) {
        const { omitted } = modelMessages(systemPrompt, context.envelope, contextBudget);
        if (omitted > 0) data.omittedMessages = omitted;
      }
      return record({ type: AgentEventType.ModelRequested, iteration: context.envelope.state.iteration + 1, data });
    }),
    sendModelRequest: sendTo('transport', ({ context }): TransportCommand => ({
      type: 'model.request',
      request: {
        traceId: context.settings.traceId,
        iteration: context.envelope.state.iteration,
        messages: modelMessages(context.settings.systemPrompt, context.envelope, context.settings.contextBudget).messages,
      },
    })),
    recordModelAnswered: recording(({ context, event }) => {
      assertEvent(event, 'model.answer');
      const { rules, agent } = context.settings;
      const tooLong = event.text.length > rules.limits.maxChars;
      // Judged here rather than on entering `validating`: one context update less per iteration.
      const position = positionOf(context, false);
      const validation = validateModelAnswer(event.text, rules, event.text.length, position);
      // An oversized answer is logged cut, with its length, so a resumed run judges it the same
      // way; a thought (and a reflection) is left out unless in debug.
      const logged = answerForLog(event.text, validation, rules, agent.debug === true, position);
      const data: ModelAnsweredData = { text: logged.text, durationMs: event.durationMs };
      if (tooLong) data.originalLength = event.text.length;
      data.attempts = event.attempts;
      const switched = modelSwitch(event.answeredBy, event.fallbacks);
      // A budgeted run meters every call: the provider's usage or the tokenizer's estimate, priced.
      const { budget } = context.settings;
      if (budget !== undefined) data.usage = meteredUsage(budget, event.usage, event.usage ? 0 : nextRequestTokens(context), event.text, switched?.answeredBy.model ?? budget.model);
      else if (event.usage !== undefined) data.usage = event.usage;
      if (logged.thoughtHidden) data.thoughtHidden = true;
      if (logged.rejection !== undefined) data.rejection = logged.rejection;
      if (switched !== undefined) Object.assign(data, switched);
      const fact: RecordedFact = { type: AgentEventType.ModelAnswered, iteration: context.envelope.state.iteration, data };
      return record(fact, { validation, answerLength: tooLong ? event.text.length : undefined });
    }),
    endWithModelFailure: assign(({ event }) => {
      assertEvent(event, 'model.failure');
      return { ending: ending(AgentEventType.RunFailed, Outcome.modelFailed(event.error)) };
    }),
    validateAnswer: assign({
      validation: ({ context }) => {
        const { resume } = context.settings;
        if (resume?.rejection !== undefined) return { ok: false, error: resume.rejection };
        const logged = context.envelope.model?.lastResponse;
        const text = typeof logged === 'string' ? logged : '';
        return validateModelAnswer(text, context.settings.rules, context.answerLength ?? text.length, positionOf(context, resume?.reasoningHidden === true));
      },
    }),
    endWithRejectedAnswer: assign(({ context }) => {
      if (context.validation?.ok !== false) return {};
      return { ending: ending(AgentEventType.RunFailed, Outcome.invalidAnswer(context.validation.error)) };
    }),
    endWithFinalAnswer: assign(({ context }) => {
      if (context.validation?.ok !== true) return {};
      return {
        ending: {
          type: AgentEventType.RunCompleted,
          data: finalAnswerData(context.validation, context.settings.agent.debug, context.settings.rules.outputCheck !== undefined),
        },
      };
    }),
    recordOutputRejected: recording(({ context }) => record(repairFact(context))),
    recordAnswerRejected: recording(({ context }) => (context.validation?.ok === false ? record(repairFact(context)) : undefined)),
    recordHumanRequested: recording(({ context }) => {
      const answer = validAnswer(context);
      if (answer === undefined) return undefined;
      const input = (answer.input ?? {}) as { question?: string; reason?: string; context?: unknown };
      const iteration = context.envelope.state.iteration;
      const data: HumanRequestedData = {
        action: answer.action === 'request_info' ? 'request_info' : 'escalate',
        question: input.question ?? '',
        // One question per iteration: like a call's idempotency key, the iteration names it.
        key: `${context.settings.traceId}:${iteration}`,
        wait: waitForHuman(context.settings.agent),
      };
      if (input.reason !== undefined) data.reason = input.reason;
      if (input.context !== undefined) data.context = input.context;
      if (answer.confidence !== undefined) data.confidence = answer.confidence;
      if (context.settings.agent.debug && answer.thought !== undefined) data.thought = answer.thought;
      return record({ type: AgentEventType.HumanRequested, iteration, data });
    }),
    recordHumanAnswered: recording(({ context, event }) => {
      assertEvent(event, 'human.answer');
      const iteration = context.envelope.state.iteration;
      return record({ type: AgentEventType.HumanAnswered, iteration, data: { key: `${context.settings.traceId}:${iteration}`, answer: event.text } });
    }),
    endWithUnansweredQuestion: assign(({ context }) => ({ ending: ending(AgentEventType.RunCompleted, Outcome.unanswered(openQuestion(context))) })),
    endWithDelegation: assign(({ context }) => {
      const answer = validAnswer(context);
      const input = (answer?.input ?? {}) as { agent_id?: string; task?: string };
      const handoff: Handoff = { agentId: input.agent_id ?? '', task: input.task ?? '' };
      return { ending: ending(AgentEventType.RunCompleted, Outcome.delegated(handoff, answer?.message)) };
    }),
    recordToolRequested: recording(({ context }) => recordIf(ToolCalls.requested(context))),
    recordToolApproved: recording(({ context, event }) => {
      assertEvent(event, 'tool.approve');
      return record(ToolCalls.approved(context, event));
    }),
    recordToolDenied: recording(({ context, event }) => {
      assertEvent(event, 'tool.deny');
      return record(ToolCalls.denied(context, event));
    }),
    endWithWaitExpired: assign(({ context }, params: { kind: 'approval' | 'client' }) => ({
      ending: ending(AgentEventType.RunFailed, Outcome.waitExpired(params.kind, ToolCalls.current(context)?.tool ?? '', waitTimeoutOf(context.settings.agent))),
    })),
    sendToolRequest: sendTo('transport', ({ context }): TransportCommand => ToolCalls.command(context)),
    recordToolAttached: recording(({ context, event }) => {
      assertEvent(event, 'tool.attached');
      return recordIf(ToolCalls.attached(context, event));
    }),
    recordToolCompleted: recording(({ context, event }) => {
      assertEvent(event, 'tool.result');
      return record(ToolCalls.completed(context, event));
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
    endWithBudgetExhausted: assign(({ context }, params?: { call: 'repair' | 'verification' }) => {
      const call = params?.call;
      const stop = call === 'repair' ? repairBudgetStop(context) : call === 'verification' ? Verifying.budgetStop(context) : nextCallBudgetStop(context);
      const why = answerBudgetStop(context) ?? stop ?? 'the budget is spent';
      const outcome = call === 'verification' ? Verifying.budgetEnding(context, why) : budgetExhausted(why, context.envelope);
      return { ending: ending(outcome.status === 'blocked' ? AgentEventType.RunFailed : AgentEventType.RunCompleted, outcome) };
    }),
    endWithTimeout: assign(({ context }) => ({ ending: ending(AgentEventType.RunFailed, Outcome.timedOut(context.settings.timeoutMs)) })),
    endWithAbort: assign(({ event }) => ({
      ending: ending(AgentEventType.RunFailed, Outcome.aborted(event.type === 'abort' ? event.reason : undefined)),
    })),
    recordMemoryRequested: recording(({ context }) => {
      const { memory } = context.settings;
      if (memory === undefined || context.ending === undefined) return undefined;
      const data = memoryRequest(context, memory, context.ending);
      return record({ type: AgentEventType.MemoryRequested, iteration: context.envelope.state.iteration, data }, { memoryRequested: data });
    }),
    sendMemoryRequest: sendTo('transport', ({ context }): TransportCommand => {
      // savingMemory is entered only with the save requested (recorded, or read from the log).
      const { conversationId, turn, maxTurns } = context.memoryRequested as MemoryRequestedData;
      return { type: 'memory.request', request: { conversationId, turn, maxTurns } };
    }),
    recordMemorySaved: recording(({ context, event }) => {
      assertEvent(event, 'memory.saved');
      return record({ type: AgentEventType.MemorySaved, iteration: context.envelope.state.iteration, data: { durationMs: event.durationMs } }, { memoryDone: true });
    }),
    endWithMemoryFailure: assign(({ context, event }) => {
      assertEvent(event, 'memory.failure');
      return { ending: ending(AgentEventType.RunFailed, Outcome.memoryFailed(event.error, context.ending?.data.outcome)), memoryDone: true };
    }),
    recordEnding: recording(({ context }) => {
      if (context.ending === undefined) return undefined;
      const { type, data } = context.ending;
      const iteration = context.envelope.state.iteration;
      return record(type === AgentEventType.RunCompleted ? { type, iteration, data } : { type: AgentEventType.RunFailed, iteration, data });
    }),
  },
});
