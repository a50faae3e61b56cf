/**
 * The REACT statechart's states, defined once: the machine, the editor's statechart view and the
 * inspector replay all use these names. Kept apart from the machine so the browser can import
 * the names without the machine.
 *
 * @example
 * ```ts
 * const actor = createActor(reactMachine, { input });
 * actor.subscribe((snapshot) => {
 *   if (snapshot.value === ReactState.AwaitingApproval) console.log('waits for a person');
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
