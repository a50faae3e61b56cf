import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { resumeAtAfter, type ResumeAt } from '../events/eventOrder.js';

/**
 * The REACT statechart's states, defined once: the machine, the editor's statechart view and the
 * inspector replay all use these names. Kept apart from the machine so the browser can import
 * the names without the machine. These are the leaf states; some sit in a parent state
 * ({@link ReactStateGroup}), so a snapshot is asked with `matches`, not by its `value`.
 *
 * @example
 * ```ts
 * const actor = createActor(reactMachine, { input });
 * actor.subscribe((snapshot) => {
 *   if (snapshot.matches({ waiting: ReactState.AwaitingApproval })) console.log('waits for a person');
 * });
 * ```
 */
export const ReactState = {
  Starting: 'starting',
  AwaitingModel: 'awaitingModel',
  Validating: 'validating',
  AwaitingTool: 'awaitingTool',
  /** The call waits for a person to approve or deny it (`requiresApproval`); the run is parked in its log meanwhile. */
  AwaitingApproval: 'awaitingApproval',
  /** The call is the client's to run (`executor: "client"`): the run waits for its result, parked in its log. */
  AwaitingClient: 'awaitingClient',
  /** The model asked a person (escalate, request_info): the run waits for the answer, parked in its log. */
  AwaitingHuman: 'awaitingHuman',
  CheckingStop: 'checkingStop',
  /** A final answer is verified before the run ends (the agent's `verification`): the verifier's model call, then done or revise. */
  Verifying: 'verifying',
  /** The verifier answered: end with the answer (passed), end done_partial (no verification left), or revise. */
  CheckingVerification: 'checkingVerification',
  /** The ending is decided: record it, after saving the conversation's memory when the run has one. */
  Concluding: 'concluding',
  SavingMemory: 'savingMemory',
  Done: 'done',
  Error: 'error',
} as const;

/** One of {@link ReactState}'s values. */
export type ReactState = (typeof ReactState)[keyof typeof ReactState];

/**
 * The REACT statechart's parent states, each holding a family of {@link ReactState}s: the waits
 * for an answer from outside, and the ending once it is decided.
 *
 * @example
 * ```ts
 * if (snapshot.matches(ReactStateGroup.Waiting)) console.log('parked until the answer comes');
 * ```
 */
export const ReactStateGroup = {
  /** The run waits for an answer from outside (awaitingApproval, awaitingClient, awaitingHuman), parked in its log. */
  Waiting: 'waiting',
  /** The ending is decided (concluding, savingMemory): abort and timeout no longer change it. */
  Ending: 'ending',
} as const;

/** One of {@link ReactStateGroup}'s values. */
export type ReactStateGroup = (typeof ReactStateGroup)[keyof typeof ReactStateGroup];

/** The parent state of each state that has one; the others sit at the machine's root. */
export const GROUP_OF: { readonly [S in ReactState]?: ReactStateGroup } = {
  [ReactState.AwaitingApproval]: ReactStateGroup.Waiting,
  [ReactState.AwaitingClient]: ReactStateGroup.Waiting,
  [ReactState.AwaitingHuman]: ReactStateGroup.Waiting,
  [ReactState.Concluding]: ReactStateGroup.Ending,
  [ReactState.SavingMemory]: ReactStateGroup.Ending,
};

/**
 * The machine's state value when it is in `state`: the name, or `{ group: name }` for a state in
 * a parent state (what a live snapshot's `value` holds, and so what a replay shows).
 *
 * @example
 * ```ts
 * stateValueOf('awaitingHuman') // { waiting: 'awaitingHuman' }
 * stateValueOf('awaitingModel') // 'awaitingModel'
 * ```
 */
export function stateValueOf(state: ReactState): ReactState | { readonly [group: string]: ReactState } {
  const group = GROUP_OF[state];
  return group === undefined ? state : { [group]: state };
}

/**
 * Where the statechart stands after each event of a log, read off the one event-order table
 * (`EVENT_ORDER`, src/events/eventOrder.ts): the state a resumed run enters at each resume point
 * (the machine's `starting` transitions), and so the state after each event (`runSteps`, the
 * editor, the inspector). Pure data: the machine, the log's readers and the browser import it.
 */

/** The state a resumed run enters at each resume point. */
export const RESUME_ENTRY: { readonly [A in ResumeAt]: ReactState } = {
  model: ReactState.AwaitingModel,
  modelResend: ReactState.AwaitingModel,
  validating: ReactState.Validating,
  toolResend: ReactState.AwaitingTool,
  approval: ReactState.AwaitingApproval,
  client: ReactState.AwaitingClient,
  human: ReactState.AwaitingHuman,
  checkingStop: ReactState.CheckingStop,
  verifyResend: ReactState.Verifying,
  verified: ReactState.CheckingVerification,
  memoryResend: ReactState.SavingMemory,
  concluding: ReactState.Concluding,
};

/** Every resume point, in the order the machine's `starting` state tries them. */
export const RESUME_POINTS = Object.keys(RESUME_ENTRY) as readonly ResumeAt[];

/**
 * The state the REACT statechart is in right after it recorded `event`. Every event is recorded
 * on one transition, so the log alone says where the machine was at each step.
 *
 * @example
 * ```ts
 * stateAfter({ type: 'tool.requested', ... }) // 'awaitingTool' ('awaitingApproval' when its data has wait: { for: 'approval' })
 * ```
 */
export function stateAfter(event: Pick<AgentEvent, 'type'> & { readonly data?: unknown }): ReactState {
  // The new run records run.started and its first model.requested on one transition out of starting.
  if (event.type === AgentEventType.RunStarted || event.type === AgentEventType.RunResumed || event.type === AgentEventType.RunForked) return ReactState.Starting;
  if (event.type === AgentEventType.RunCompleted) return ReactState.Done;
  if (event.type === AgentEventType.RunFailed) return ReactState.Error;
  return RESUME_ENTRY[resumeAtAfter(event) ?? 'model'];
}
