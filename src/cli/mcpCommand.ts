import path from 'node:path';
import { Writable } from 'node:stream';
import { RedflowError } from '../errors.js';
import { DEFAULT_RUNS_DIR } from '../host/embeddedFlowRun.js';
import { answerOnLog } from '../mcpServer/answerHints.js';
import { listFlowTools, type SkippedFlow } from '../mcpServer/flowTools.js';
import { createEmbeddedRunBackend } from '../server/embeddedRunBackend.js';
import { createFlowStore } from '../server/flowStore.js';
import { DEFAULT_FLOWS_DIR } from '../server/server.js';
import { allowFilesOptionHelp, allowFilesOptionSpec, allowedFolders } from './allowFilesOption.js';
import { help, parse, usageError } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exitCodes.js';
import { exitAfterGrace } from './stopWithin.js';
import { line, styles } from './output.js';

const mcpUsage = `usage: redflow mcp [--flows <dir>] [--only <id,id,…>] [--runs <dir>] [--allow-files <dir> ...]

Serves the flows of a folder as the tools of an MCP server over stdio, for a desktop or IDE
client that starts it (its "mcpServers" config). Each call of a tool is a run of its flow in this
process, with its own log in the runs folder (replay, inspect and resume it like any run). Stdout
carries only the protocol; everything else goes to stderr. \`redflow serve --mcp\` serves the same
tools over Streamable HTTP at /mcp.
  --flows <dir>   the flows folder: each valid flow is a tool named after its id (default ./${DEFAULT_FLOWS_DIR});
                  a flow that does not validate is left out, with a warning on stderr
  --only <ids>    offer only these flows (ids separated by commas); one that is not there or does
                  not validate stops the command (exit 65 or 66)
  --runs <dir>    where the runs' logs are written (default ${DEFAULT_RUNS_DIR}, as \`redflow run\`)
${allowFilesOptionHelp}
Ends when the client closes stdin, or on SIGINT or SIGTERM; runs under way are aborted (their logs
record it). Exit codes: 0 stopped, 64 usage, 65 a flow of --only does not validate, 66 not found.`;

/** `redflow mcp`: the flows of a folder as an MCP server over stdio. */
export const mcp: Command = {
  name: 'mcp',
  usage: mcpUsage,
  async run(args, output) {
    const { values, positionals } = parse(args, { flows: { type: 'string' }, only: { type: 'string' }, runs: { type: 'string' }, ...allowFilesOptionSpec }, mcpUsage);
    if (values.help) return help(output, mcpUsage);
    if (positionals.length > 0) throw usageError(`unexpected argument "${positionals[0]}": give the flows folder with --flows`, mcpUsage);
    const only = values.only === undefined ? undefined : (values.only as string).split(',').map((id) => id.trim()).filter((id) => id !== '');
    if (only !== undefined && only.length === 0) throw usageError('--only takes flow ids separated by commas', mcpUsage);
    const flowsDir = path.resolve((values.flows as string | undefined) ?? DEFAULT_FLOWS_DIR);
    const runsDir = path.resolve((values.runs as string | undefined) ?? DEFAULT_RUNS_DIR);
    const allowFiles = allowedFolders(values);
    const s = styles(output.color);
    const warn = (flow: SkippedFlow) =>
      line(output.err, s.yellow(`warning ${flow.error.code}: the flow "${flow.flowId}" is not offered: ${flow.error.message}${flow.error.hint ? ` (${flow.error.hint})` : ''}`));

    const flows = createFlowStore(flowsDir, allowFiles);
    // Checked before anything is served: --only names flows that must be there and valid.
    const { tools, skipped } = await listFlowTools(flows, only);
    const [refused] = only === undefined ? [] : skipped;
    if (refused !== undefined) throw new RedflowError({ ...refused.error, message: `--only ${refused.flowId}: ${refused.error.message}` });
    if (tools.length === 0) line(output.err, s.yellow(`warning: ${flowsDir} has no valid flow: the server offers no tool`));

    // The protocol's own stream; whatever else writes to stdout (a tool module's console.log) goes to stderr.
    const protocolOut = protocolStdout();
    const backend = createEmbeddedRunBackend({
      flowsDir,
      runsDir,
      allowFiles: [flowsDir, ...allowFiles],
      onRunError: (traceId, error) => line(output.err, s.red(`run ${traceId} failed while ending: ${error instanceof Error ? error.message : String(error)}`)),
    });
    // Loaded only now: neither `import 'redflow'` nor the other commands load the MCP SDK.
    const [{ createFlowMcpServer }, { StdioServerTransport }] = await Promise.all([import('../mcpServer/flowMcpServer.js'), import('@modelcontextprotocol/sdk/server/stdio.js')]);
    const server = createFlowMcpServer({ flows, backend, howToAnswer: answerOnLog(runsDir), ...(only !== undefined && { only }), onSkipped: warn });
    const transport = new StdioServerTransport(process.stdin, protocolOut);
    const ended = new Promise<string>((resolve) => {
      transport.onclose = () => resolve('the client closed the connection');
      process.stdin.once('end', () => resolve('stdin ended'));
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    transport.onerror = (error) => line(output.err, s.red(`MCP: ${error.message}`));
    await server.connect(transport);
    line(output.err, s.dim(`redflow mcp: ${tools.length} tool${tools.length === 1 ? '' : 's'} (${tools.map((tool) => tool.name).join(', ')}) from ${flowsDir}; logs in ${runsDir}`));
    const why = await ended;
    line(output.err, s.dim(`redflow mcp: ${why}: stopping (runs under way are aborted)`));
    await backend.close();
    await server.close().catch(() => undefined);
    // stdin may still hold the process (a signal came first): what was owed is written by now.
    exitAfterGrace(ExitCode.Ok);
    return ExitCode.Ok;
  },
};

/**
 * A stream to the real stdout for the protocol, with `process.stdout` itself sent to stderr from
 * now on: an MCP client reads stdout as messages, and one stray line would break the connection.
 */
function protocolStdout(): Writable {
  const write = process.stdout.write.bind(process.stdout);
  const protocol = new Writable({
    write(chunk: Buffer, _encoding, done) {
      write(chunk, (error) => done(error ?? undefined));
    },
  });
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return protocol;
}

