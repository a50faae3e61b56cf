import { and } from 'xstate';
import { emptyEnvelope } from '../events/evolve.js';
import { systemPromptFor } from './prompt.js';
import { reactSetup } from './reactSetup.js';
import type { TransportActorInput } from './reactTypes.js';
import { GROUP_OF, ReactState, ReactStateGroup } from './reactState.js';
import { RESUME_ENTRY, RESUME_POINTS } from './reactState.js';

export { ReactState } from './reactState.js';

/** The target of a transition into `state`, from anywhere in the machine: `#react.waiting.awaitingHuman`. */
function to(state: ReactState): string {
  const group = GROUP_OF[state];
  return `#react.${group === undefined ? '' : `${group}.`}${state}`;
}

/** The transitions out of `starting` for a resumed run: into the state the resume table gives each resume point. */
function resumeTransitions() {
  return RESUME_POINTS.map((at) => ({
    guard: { type: 'resumesAt' as const, params: { at } },
    target: to(RESUME_ENTRY[at]),
    // A run resumed before its first model request makes it; an answer not yet judged is judged again.
    actions: at === 'model' ? (['recordRunResumed', 'recordModelRequested'] as const) : at === 'validating' ? (['recordRunResumed', 'validateAnswer'] as const) : (['recordRunResumed'] as const),
  }));
}

/**
 * The REACT statechart (docs/architecture.md): awaitingModel → validating → awaitingTool →
 * checkingStop → awaitingModel | concluding (a final answer through verifying first when the agent
 * verifies it: docs/verification.md), and concluding from anywhere on an error, an abort
 * or the timeout; concluding → (savingMemory → concluding) → done | error. A call may wait for an
 * answer from outside first: awaitingApproval (a person approves, → awaitingTool, or denies, →
 * checkingStop) and awaitingClient (the client runs the tool and its result comes back); the
 * model may ask a person (escalate, request_info: awaitingHuman, whose answer is the next
 * observation) or hand its task to another agent (delegate: the run ends `delegate`). The three
 * waits sit in the parent state `waiting`, concluding and savingMemory in `ending` (where abort
 * and timeout no longer change the ending), as the docs' diagram draws them. The host parks a
 * waiting run in its log and resumes it into the wait when the answer comes. It only
 * orchestrates, validates and routes: every effect goes through the long-lived `transport` actor
 * it invokes, which the host provides with `reactMachine.provide({ actors: { transport } })`. It
 * reads no clock and sets no timer: the host sends `timeout` when the run's time is up, and
 * `abort` to stop it; ids come from the input. No I/O is imported here.
 *
 * @example
 * ```ts
 * const actor = createActor(reactMachine.provide({ actors: { transport } }), { input });
 * actor.on('fact', ({ fact }) => recorder.record(fact));
 * actor.start();
 * ```
 */
export const reactMachine = reactSetup.createMachine({
  id: 'react',
  context: ({ input }) => ({
    settings: {
      traceId: input.traceId,
      agent: input.agent,
      tools: input.tools,
      rules: input.rules,
      systemPrompt: systemPromptFor(input.tools, input.agent),
      run: input.run,
      timeoutMs: input.timeoutMs,
      resume: input.resume,
      memory: input.memory,
      effects: input.effects,
      contextBudget: input.contextBudget,
      budget: input.budget,
    },
    envelope: input.resume?.envelope ?? emptyEnvelope(input.traceId),
    validation: undefined,
    answerLength: input.resume?.answerLength,
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
    abort: { target: to(ReactState.Concluding), actions: 'endWithAbort' },
    timeout: { target: to(ReactState.Concluding), actions: 'endWithTimeout' },
  },
  states: {
    [ReactState.Starting]: {
      always: [
        // A first call whose input alone overspends the budget is not made (src/machines/contextBudget.ts).
        { guard: 'firstCallOverBudget', target: to(ReactState.Concluding), actions: ['recordRunStarted', 'endWithBudgetExhausted'] },
        { guard: 'startsNewRun', target: to(ReactState.AwaitingModel), actions: ['recordRunStarted', 'recordModelRequested'] },
        // Resumed before a model request was recorded (killed between run.started and its budget's
        // ending, or before a repair's re-ask): the call is checked as a new one would be.
        { guard: and([{ type: 'resumesAt', params: { at: 'model' as const } }, 'nextCallOverBudget']), target: to(ReactState.Concluding), actions: ['recordRunResumed', 'endWithBudgetExhausted'] },
        { guard: and([{ type: 'resumesAt', params: { at: 'verifyResend' as const } }, 'verificationOverBudget']), target: to(ReactState.Concluding), actions: ['recordRunResumed', { type: 'endWithBudgetExhausted', params: { call: 'verification' as const } }] },
        // A resumed run enters the state its log ends in (src/machines/reactState.ts).
        ...resumeTransitions(),
      ],
    },
    [ReactState.AwaitingModel]: {
      entry: 'sendModelRequest',
      on: {
        'model.answer': { target: to(ReactState.Validating), actions: ['recordModelAnswered'] },
        'model.failure': { target: to(ReactState.Concluding), actions: 'endWithModelFailure' },
      },
    },
    [ReactState.Validating]: {
      always: [
        // Past its budget, a run acts on nothing but a valid final answer.
        { guard: 'answerOverBudget', target: to(ReactState.Concluding), actions: 'endWithBudgetExhausted' },
        // A repair's re-ask is a model call: checked against the budget as the next iteration's is.
        { guard: and(['answerNeedsRepair', 'repairOverBudget']), target: to(ReactState.Concluding), actions: { type: 'endWithBudgetExhausted', params: { call: 'repair' as const } } },
        { guard: 'answerNeedsRepair', target: to(ReactState.AwaitingModel), actions: ['recordAnswerRejected', 'recordModelRequested'] },
        { guard: 'answerIsInvalid', target: to(ReactState.Concluding), actions: 'endWithRejectedAnswer' },
        { guard: and(['outputNeedsRepair', 'repairOverBudget']), target: to(ReactState.Concluding), actions: { type: 'endWithBudgetExhausted', params: { call: 'repair' as const } } },
        { guard: 'outputNeedsRepair', target: to(ReactState.AwaitingModel), actions: ['recordOutputRejected', 'recordModelRequested'] },
        // An agent that verifies its answer sends a final one to verification first (docs/verification.md).
        // So is the verifier's call: refused, the final answer is kept unverified (docs/budgets.md).
        { guard: and(['answerGoesToVerification', 'verificationOverBudget']), target: to(ReactState.Concluding), actions: { type: 'endWithBudgetExhausted', params: { call: 'verification' as const } } },
        { guard: 'answerGoesToVerification', target: to(ReactState.Verifying), actions: ['recordVerificationRequested'] },
        { guard: 'answerIsFinal', target: to(ReactState.Concluding), actions: 'endWithFinalAnswer' },
        { guard: 'answerAsksPerson', target: to(ReactState.AwaitingHuman), actions: ['recordHumanRequested'] },
        // A delegation to another agent ends the run with its handoff; one to a connected subagent
        // is a call of it, and goes on below like a tool call.
        { guard: 'answerDelegates', target: to(ReactState.Concluding), actions: 'endWithDelegation' },
        { guard: 'toolNeedsApproval', target: to(ReactState.AwaitingApproval), actions: ['recordToolRequested'] },
        { guard: 'toolRunsOnClient', target: to(ReactState.AwaitingClient), actions: ['recordToolRequested'] },
        { target: to(ReactState.AwaitingTool), actions: ['recordToolRequested'] },
      ],
    },
    // The waits for an answer from outside. Nothing is sent from here: the host parks the run in
    // its log (no process holds it) and resumes it into one of these states with the answer.
    [ReactStateGroup.Waiting]: {
      // XState asks for one; every transition in names the wait it enters.
      initial: ReactState.AwaitingApproval,
      states: {
        [ReactState.AwaitingApproval]: {
          on: {
            'tool.approve': [
              { guard: 'approvedToolRunsOnClient', target: to(ReactState.AwaitingClient), actions: ['recordToolApproved'] },
              { target: to(ReactState.AwaitingTool), actions: ['recordToolApproved'] },
            ],
            'tool.deny': { target: to(ReactState.CheckingStop), actions: ['recordToolDenied'] },
            'wait.expire': { target: to(ReactState.Concluding), actions: { type: 'endWithWaitExpired', params: { kind: 'approval' } } },
          },
        },
        [ReactState.AwaitingClient]: {
          on: {
            'tool.result': { target: to(ReactState.CheckingStop), actions: ['recordToolCompleted'] },
            'wait.expire': { target: to(ReactState.Concluding), actions: { type: 'endWithWaitExpired', params: { kind: 'client' } } },
          },
        },
        // No answer in time (or a host that cannot wait) leaves the question as the outcome: escalate.
        [ReactState.AwaitingHuman]: {
          on: {
            'human.answer': { target: to(ReactState.CheckingStop), actions: ['recordHumanAnswered'] },
            'wait.expire': { target: to(ReactState.Concluding), actions: 'endWithUnansweredQuestion' },
          },
        },
      },
    },
    [ReactState.AwaitingTool]: {
      entry: 'sendToolRequest',
      on: {
        'tool.result': { target: to(ReactState.CheckingStop), actions: ['recordToolCompleted'] },
        // The call goes on (a self-transition does not re-enter: nothing is sent again); only the
        // log learns where its work lives, for a resume to re-attach.
        'tool.attached': { target: to(ReactState.AwaitingTool), actions: ['recordToolAttached'] },
      },
    },
    [ReactState.CheckingStop]: {
      always: [
        { guard: 'confidenceThresholdReached', target: to(ReactState.Concluding), actions: 'endWithConfidenceStop' },
        { guard: 'iterationLimitReached', target: to(ReactState.Concluding), actions: 'endWithIterationLimit' },
        { guard: 'nextCallOverBudget', target: to(ReactState.Concluding), actions: 'endWithBudgetExhausted' },
        { target: to(ReactState.AwaitingModel), actions: ['recordModelRequested'] },
      ],
    },
    // The verifier's model call (docs/verification.md), then the decision: the answer verified (done,
    // the verification in the outcome), out of verifications (done_partial with the failed checks),
    // or the failed checks are the model's next observation (revise).
    [ReactState.Verifying]: {
      entry: 'sendVerificationRequest',
      on: {
        'model.answer': { target: to(ReactState.CheckingVerification), actions: ['recordVerificationCompleted'] },
        'model.failure': { target: to(ReactState.Concluding), actions: 'endWithModelFailure' },
      },
    },
    [ReactState.CheckingVerification]: {
      always: [
        { guard: 'verificationPassed', target: to(ReactState.Concluding), actions: 'endWithVerifiedAnswer' },
        { guard: 'verificationsExhausted', target: to(ReactState.Concluding), actions: 'endWithUnverifiedAnswer' },
        { guard: 'nextCallOverBudget', target: to(ReactState.Concluding), actions: 'endWithBudgetExhausted' },
        { target: to(ReactState.AwaitingModel), actions: ['recordModelRequested'] },
      ],
    },
    // Every ending passes through concluding: the conversation's memory is saved as a step of its
    // own (logged, and resumed like any other effect) before the terminal event, so no turn is
    // lost to a crash. The ending is decided here, so abort and timeout change nothing; the save
    // is bounded by the memory call's own timeout.
    [ReactStateGroup.Ending]: {
      initial: ReactState.Concluding,
      on: { abort: {}, timeout: {} },
      states: {
        [ReactState.Concluding]: {
          always: [
            { guard: 'savesMemory', target: to(ReactState.SavingMemory), actions: ['recordMemoryRequested'] },
            { guard: 'endsInFailure', target: to(ReactState.Error), actions: ['recordEnding'] },
            { target: to(ReactState.Done), actions: ['recordEnding'] },
          ],
        },
        [ReactState.SavingMemory]: {
          entry: 'sendMemoryRequest',
          on: {
            'memory.saved': { target: to(ReactState.Concluding), actions: ['recordMemorySaved'] },
            'memory.failure': { target: to(ReactState.Concluding), actions: 'endWithMemoryFailure' },
          },
        },
      },
    },
    [ReactState.Done]: { type: 'final' },
    [ReactState.Error]: { type: 'final' },
  },
});
