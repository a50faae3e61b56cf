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
