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
  Done: 'done',
  Error: 'error',
} as const;

/** One of {@link ReactState}'s values. */
export type ReactState = (typeof ReactState)[keyof typeof ReactState];
