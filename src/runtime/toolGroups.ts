import type { AgentCoreReactConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';

/**
 * The agent config with each group's name (a `tool.mcp` node's) in `allowedTools` and
 * `requiresApproval` replaced by the names of the tools it brought: what the run records and the
 * statechart checks the model's calls against. `agent` itself when there is no group.
 *
 * @example
 * ```ts
 * expandToolGroups({ strategy: 'react', maxIterations: 5, allowedTools: ['fs'] }, new Map([['fs', ['read_file', 'list_directory']]]));
 * // { …, allowedTools: ['read_file', 'list_directory'] }
 * ```
 */
export function expandToolGroups(agent: AgentCoreReactConfig, groups: ReadonlyMap<string, readonly string[]>): AgentCoreReactConfig {
  if (groups.size === 0) return agent;
  const expand = (names: readonly string[]): string[] => [...new Set(names.flatMap((name) => groups.get(name) ?? [name]))];
  return {
    ...agent,
    allowedTools: expand(agent.allowedTools),
    ...(agent.requiresApproval && { requiresApproval: expand(agent.requiresApproval) }),
  };
}

/**
 * Two tools with one name would make the model's call ambiguous: an MCP server's tool named like
 * another tool of the flow (or of another server) is `DUPLICATE_TOOL_NAME`, never renamed behind
 * the flow author's back.
 *
 * @throws RedflowError `DUPLICATE_TOOL_NAME` naming the tool and where each one comes from.
 * @example
 * ```ts
 * checkUniqueNames(['echo', 'echo'], new Map([['everything', ['echo']]])); // throws DUPLICATE_TOOL_NAME
 * ```
 */
export function checkUniqueNames(names: readonly string[], groups: ReadonlyMap<string, readonly string[]>): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (!seen.has(name)) {
      seen.add(name);
      continue;
    }
    const servers = [...groups].filter(([, tools]) => tools.includes(name)).map(([server]) => `'${server}'`);
    throw new RedflowError(
      errorInfo(ErrorCode.DUPLICATE_TOOL_NAME, `two tools are named '${name}' (one comes from the MCP server ${servers.join(' and ')})`, {
        hint: 'set a "prefix" on the tool.mcp node (e.g. "fs_"), or leave the tool out with its "exclude" list',
      }),
    );
  }
}

/** A flow with a `tool.mcp` asked for its specs only (a cluster's core worker): not served there yet. */
export function mcpOutsideEmbedded(name: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.TOOL_CONFIG_INVALID, `MCP server '${name}' (tool.mcp) cannot be used on a cluster yet: its tools are known only where the server runs`, {
      hint: 'run the flow embedded (redflow run, redflow serve) or from code; cluster workers do not serve tool.mcp nodes yet',
    }),
  );
}
