import type { Command } from './command.js';

/** A command as `redflow --help` lists it: its name and summary, its module loaded only to run it. */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

/**
 * Every `redflow` command, in the order `--help` lists them. A command's module (and what it
 * imports: NATS, the server, the editor, provider SDKs) is loaded when that command runs, so
 * `redflow --version` and `--help` start as fast as Node itself.
 *
 * @example
 * ```ts
 * const entry = commandTable.find((c) => c.name === 'replay');
 * const code = await (await entry!.load()).run(['run.jsonl'], terminalOutput());
 * ```
 */
export const commandTable: readonly CommandEntry[] = [
  { name: 'run', summary: 'run a flow and show each iteration live', load: async () => (await import('./commands.js')).run },
  { name: 'validate', summary: 'check a flow file and list its errors and warnings', load: async () => (await import('./commands.js')).validate },
  { name: 'replay', summary: 'rebuild a run from its log and print its timeline', load: async () => (await import('./commands.js')).replay },
  { name: 'resume', summary: 'continue an interrupted run from its log', load: async () => (await import('./commands.js')).resume },
  { name: 'diff', summary: 'compare two runs iteration by iteration and mark the first difference', load: async () => (await import('./diffCommand.js')).diff },
  { name: 'fork', summary: 'start a new run from a run\'s log at an iteration, with changes', load: async () => (await import('./forkCommand.js')).fork },
  { name: 'approve', summary: 'approve the tool call a run waits on', load: async () => (await import('./answerCommands.js')).approve },
  { name: 'deny', summary: 'deny the tool call a run waits on (the model sees why)', load: async () => (await import('./answerCommands.js')).deny },
  { name: 'tool-result', summary: 'give a run the result of a tool its client runs', load: async () => (await import('./answerCommands.js')).toolResult },
  { name: 'answer', summary: 'answer the question a run waits on (the model asked a person)', load: async () => (await import('./answerCommands.js')).answer },
  { name: 'worker', summary: "host a flow's core, model, tools and memory on a NATS cluster", load: async () => (await import('./clusterCommands.js')).worker },
  { name: 'tail', summary: "print the events of the cluster's runs as they happen", load: async () => (await import('./clusterCommands.js')).tail },
  { name: 'inspect', summary: "step through a run's statechart in the Stately inspector", load: async () => (await import('./inspectCommand.js')).inspect },
  { name: 'serve', summary: 'serve the flow editor and the HTTP API', load: async () => (await import('./serveCommand.js')).serve },
  { name: 'mcp', summary: 'serve flows as the tools of an MCP server over stdio', load: async () => (await import('./mcpCommand.js')).mcp },
  { name: 'convert', summary: 'convert a flow file to Node-RED flows JSON, or back', load: async () => (await import('./convertCommand.js')).convert },
  { name: 'eval', summary: 'score a suite of recorded runs against a changed flow', load: async () => (await import('./evalCommand.js')).evalCommand },
];
