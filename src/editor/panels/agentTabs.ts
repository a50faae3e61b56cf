/** The agent core panel's tabs: its settings, its tools, the run under way, the errors. */
export const AgentTab = {
  General: 'general',
  Tools: 'tools',
  Runtime: 'runtime',
  Errors: 'errors',
} as const;

/** One of {@link AgentTab}'s values. */
export type AgentTab = (typeof AgentTab)[keyof typeof AgentTab];

/** Each tab's button label. */
export const AGENT_TAB_TITLES: { readonly [T in AgentTab]: string } = {
  [AgentTab.General]: 'General',
  [AgentTab.Tools]: 'Tools',
  [AgentTab.Runtime]: 'Runtime / Debug',
  [AgentTab.Errors]: 'Errors',
};
