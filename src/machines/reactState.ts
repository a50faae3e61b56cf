/**
 * The REACT statechart's states, defined once: the machine, the editor's statechart view and the
 * inspector replay all use these names. Kept apart from the machine so the browser can import
 * the names without the machine.
 */
export const ReactState = {
  Starting: 'starting',
  AwaitingModel: 'awaitingModel',
  Validating: 'validating',
  AwaitingTool: 'awaitingTool',
  CheckingStop: 'checkingStop',
  /** The ending is decided: record it, after saving the conversation's memory when the run has one. */
  Concluding: 'concluding',
  SavingMemory: 'savingMemory',
  Done: 'done',
  Error: 'error',
} as const;

/** One of {@link ReactState}'s values. */
export type ReactState = (typeof ReactState)[keyof typeof ReactState];
