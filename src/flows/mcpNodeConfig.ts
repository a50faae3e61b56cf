import { ErrorCode } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from './diagnostics.js';

/**
 * A `tool.mcp` node reaches its server one way: a `command` to start (stdio) or a `url` (Streamable
 * HTTP), never both and never neither; the stdio settings mean nothing to a URL, and the HTTP
 * settings nothing to a command. The schema cannot say it in a way its generated type can carry.
 *
 * @example
 * ```ts
 * mcpTransportProblems('fs', { command: 'npx', url: 'http://x/mcp' }, 'nodes[3].config'); // one NODE_CONFIG_INVALID
 * ```
 */
export function mcpTransportProblems(nodeId: string, config: Readonly<Record<string, unknown>>, configPath: string): FlowDiagnostic[] {
  const hasCommand = config.command !== undefined;
  const hasUrl = config.url !== undefined;
  const hint = 'give either "command" (with "args", "env", "cwd") to start a stdio server, or "url" (with "headers", "headersFromEnv") for a Streamable HTTP server';
  if (hasCommand === hasUrl) {
    const what = hasCommand ? 'has both "command" and "url"' : 'has neither "command" nor "url"';
    return [flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `tool.mcp node '${nodeId}' ${what}`, { hint, path: configPath, nodeId })];
  }
  const misplaced = (hasCommand ? ['headers', 'headersFromEnv'] : ['args', 'env', 'cwd']).filter((key) => config[key] !== undefined);
  return misplaced.map((key) =>
    flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `tool.mcp node '${nodeId}': "${key}" applies only to ${hasCommand ? 'a url' : 'a command'}`, {
      hint,
      path: `${configPath}.${key}`,
      nodeId,
    }),
  );
}
