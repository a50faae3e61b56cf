import { openBrowser } from '../inspect/openBrowser.js';
import path from 'node:path';
import { DEFAULT_RUNS_DIR } from '../host/embeddedFlowRun.js';
import { RedflowError } from '../errors.js';
import { TOKEN_ENV, assertTokenForHost } from '../server/auth.js';
import type { RunBackend } from '../server/runBackend.js';
import type { FlowStore } from '../server/flowStore.js';
import { NODE_RED_TOKEN_ENV, nodeRedAdmin } from '../server/nodeRed/nodeRedAdmin.js';
import { nodeRedFlowStore } from '../server/nodeRed/nodeRedFlowStore.js';
import { createNodeRedRunBackend } from '../server/nodeRed/nodeRedRunBackend.js';
import { DEFAULT_FLOWS_DIR, DEFAULT_HOST, DEFAULT_PORT, MCP_PATH, createRedflowServer, type RedflowServerOptions } from '../server/server.js';
import { answerOnServer } from '../mcpServer/answerHints.js';
import { help, parse, usageError } from './args.js';
import { allowFilesOptionSpec, allowedFolders } from './allowFilesOption.js';
import type { Command } from './command.js';
import { ExitCode } from './exitCodes.js';
import { exitAfterGrace, stopWithin } from './stopWithin.js';
import { connectFromOptions, natsOptionSpecs, natsOptionsHelp, natsUrl, subjectPrefix } from './natsOptions.js';
import { line, styles, type Output } from './output.js';
import { inspectOptionSpecs, inspectOptionsHelp, inspectSessionOptions } from './inspectCommand.js';
import { sayInspectorIsHosted } from './inspectorPage.js';
import { openInspectSession, type InspectSession } from '../inspect/index.js';
import type { InspectorFactory } from '../server/runBackend.js';
import { createStepService } from '../stepService/reactStepService.js';
import { loadStepModels } from '../stepService/stepModels.js';
import { jsonlStepLogs, type StepLogs } from '../stepService/stepLogs.js';

const serveUsage = `usage: redflow serve [--flows <dir>] [--runs <dir>] [--host <address>] [--port <n>] [--token <token>]
                     [--allow-files <dir> ...] [--models <file>] [--workspace <dir>] [--open] [--verbose] [--nats <url>] [--mcp] [--a2a]
                     [--allow-mcp-commands]
                     [--inspect [--inspect-port <n> | --inspect-url <ws-url>] [--no-open]]
       redflow serve --node-red <url> [--node-red-token <token>] [--host …] [--port …] [--token …] [--open] [--verbose]

Serves the flow editor and the HTTP API (/api/…) on one port, until Ctrl-C or SIGTERM (which
abort the runs under way: their logs record it). Runs run in this process, or with --nats on a
cluster of workers (\`redflow worker\`), where they go on when the server stops.
  --flows <dir>      the flows directory: flow ids are paths in it without .json (default ./${DEFAULT_FLOWS_DIR})
  --runs <dir>       where run logs are written and read (default ${DEFAULT_RUNS_DIR}, as \`redflow run\`)
  --host <address>   the address to listen on (default ${DEFAULT_HOST}: this machine only)
  --port <n>         the port (default ${DEFAULT_PORT}; 0 picks a free one)
  --token <token>    require Authorization: Bearer <token> on every /api request [${TOKEN_ENV}];
                     required when --host is not a loopback address
  --open             open the editor in the browser
  --allow-files <dir>
                     a folder besides the flows directory where the files a flow names (tool
                     modules, answers files, memory stores) may be; repeat for more. A flow naming
                     any other file is refused (FLOW_FILE_OUTSIDE_ROOTS) when saved, validated or run
  --models <file>    the models POST /api/agent/react_step offers, by name: { "models": { "<name>":
                     <model.llm settings> } } (a step may bring its own key in user_api_keys.llmKey)
  --workspace <dir>  the folder the step service reads context files from (explicit_context_paths,
                     pinned items in .redflow/pins, the focused file); without it, none are read
  --a2a              serve every flow as an A2A agent: its card at /a2a/<flowId>/.well-known/agent-card.json
                     (public), JSON-RPC at /a2a/<flowId> (behind --token); see docs/a2a.md
  --verbose          log every request (method, path, status, time) on stderr
  --allow-mcp-commands
                     let the API save flows whose tool.mcp nodes start a program ("command"):
                     whoever holds the token can then run any program as this server
  --mcp              also serve the flows as the tools of an MCP server over Streamable HTTP at /mcp,
                     behind the same token as the API (see \`redflow mcp\` for stdio)
  --node-red <url>   edit and run the flows of the Node-RED at <url> (its Admin API) instead of a flows
                     directory: each tab with Redflow nodes is a flow; Save deploys it, Run runs it in
                     Node-RED's agent node (node-red-contrib-redflow installed there), followed live
  --node-red-token <token>
                     a token of Node-RED's adminAuth, when it is on [${NODE_RED_TOKEN_ENV}]
  --inspect          show every run's statechart in the Stately inspector: live in embedded mode;
                     with --nats (the statechart runs in a worker) its events, replayed as they arrive
Exit codes: 0 stopped, 64 usage (or the port is taken, or Node-RED refused the token), 69 NATS,
Node-RED or the inspector unreachable.

${natsOptionsHelp}

${inspectOptionsHelp}`;

/** `redflow serve`: the editor and the HTTP API. */
export const serve: Command = {
  name: 'serve',
  usage: serveUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      {
        flows: { type: 'string' },
        runs: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        open: { type: 'boolean' },
        verbose: { type: 'boolean' },
        a2a: { type: 'boolean' },
        'allow-mcp-commands': { type: 'boolean' },
        models: { type: 'string' },
        workspace: { type: 'string' },
        ...allowFilesOptionSpec,
        inspect: { type: 'boolean' },
        ...inspectOptionSpecs,
        ...natsOptionSpecs,
        'node-red': { type: 'string' },
        'node-red-token': { type: 'string' },
        mcp: { type: 'boolean' },
      },
      serveUsage,
    );
    if (values.help) return help(output, serveUsage);
    if (positionals.length > 0) throw usageError(`unexpected argument "${positionals[0]}"`, serveUsage);
    const port = portOf(values.port as string | undefined);
    const host = (values.host as string | undefined) ?? DEFAULT_HOST;
    const token = (values.token as string | undefined) ?? (process.env[TOKEN_ENV] || undefined);
    const flowsDir = path.resolve((values.flows as string | undefined) ?? DEFAULT_FLOWS_DIR);
    const runsDir = path.resolve((values.runs as string | undefined) ?? DEFAULT_RUNS_DIR);
    const s = styles(output.color);
    const log = (text: string) => line(output.err, s.dim(`${new Date().toISOString()} ${text}`));
    // Checked before connecting anywhere; SERVE_TOKEN_REQUIRED is a wrong command line (exit 64).
    assertTokenForHost(host, token);

    if (!values.inspect) {
      for (const flag of ['inspect-port', 'inspect-url', 'no-open'] as const) {
        if (values[flag] !== undefined) throw usageError(`--${flag} needs --inspect`, serveUsage);
      }
    }
    const nodeRedUrl = values['node-red'] as string | undefined;
    // With --node-red, NATS_URL in the environment is not this server's business.
    const nats = nodeRedUrl === undefined ? natsUrl(values) : undefined;
    if (nats !== undefined && values.runs !== undefined) throw usageError('--runs is for embedded runs; with --nats the logs are in JetStream', serveUsage);
    if (nodeRedUrl === undefined && values['node-red-token'] !== undefined) throw usageError('--node-red-token goes with --node-red', serveUsage);
    if (nodeRedUrl !== undefined) {
      for (const flag of ['flows', 'runs', 'allow-files', 'inspect', 'nats'] as const) {
        if (values[flag] !== undefined) throw usageError(`--${flag} does not go with --node-red: the flows and their runs are Node-RED's`, serveUsage);
      }
      if (!/^https?:\/\/[^/]/.test(nodeRedUrl)) throw usageError(`--node-red takes Node-RED's http(s) address, not "${nodeRedUrl}"`, serveUsage);
    }
    // Opened first, so an inspector that cannot be reached stops the command before it serves.
    const session: InspectSession | undefined = values.inspect ? await openInspectSession(inspectSessionOptions(values, serveUsage, output)) : undefined;
    const closeSession = async () => session?.close().catch(() => undefined);
    if (session) line(output.err, s.cyan(`inspector: ${session.pageUrl ?? session.socketUrl}`));
    if (session?.pageUrl !== undefined) sayInspectorIsHosted(output);
    const inspector: InspectorFactory | undefined = session && ((traceId) => session.inspectRun(traceId));
    // Checked before connecting anywhere: a wrong models file stops the server with its reason.
    const stepModels = values.models === undefined ? new Map() : await loadStepModels(values.models as string, process.env);
    const workspace = values.workspace === undefined ? undefined : path.resolve(values.workspace as string);
    let stepLogs: StepLogs = jsonlStepLogs(runsDir);
    let backend: RunBackend | undefined;
    let closeNats: () => Promise<void> = async () => undefined;
    // Stops the server, then the NATS connection: within a deadline, since with the server gone a
    // drain waits for it forever.
    let stopServing = async (close: () => Promise<void>) => close();
    if (nats !== undefined) {
      const prefix = subjectPrefix(values);
      const nc = await connectFromOptions(values, 'redflow-serve');
      closeNats = async () => void (await stopWithin([], nc));
      stopServing = async (close) => void (await stopWithin([close], nc));
      try {
        const { createNatsRunBackend } = await import('../nats/serve/natsRunBackend.js');
        const natsBackend = await createNatsRunBackend({ nc, prefix, flowsDir });
        // Loaded here, not at the top: an embedded server never needs the NATS client.
        stepLogs = (await import('../nats/serve/jetStreamStepLogs.js')).jetStreamStepLogs(nc, prefix);
        backend = session ? followedIntoInspector(natsBackend, session) : natsBackend;
      } catch (error) {
        await closeNats();
        await closeSession();
        throw error;
      }
    }

    let flows: FlowStore | undefined;
    if (nodeRedUrl !== undefined) {
      const nodeRedToken = (values['node-red-token'] as string | undefined) ?? (process.env[NODE_RED_TOKEN_ENV] || undefined);
      const admin = nodeRedAdmin({ url: nodeRedUrl, ...(nodeRedToken !== undefined && { token: nodeRedToken }) });
      // Checked before serving: a Node-RED out of reach, or a token it refuses, stops the command.
      await admin.flows();
      await admin.redflow('GET', '/runs?limit=1').catch((error: unknown) => {
        const info = error instanceof RedflowError ? error : undefined;
        line(output.err, s.yellow(`warning ${info?.code ?? ''}: flows can be edited, not run: ${info?.message ?? String(error)}${info?.hint ? ` (${info.hint})` : ''}`));
      });
      flows = nodeRedFlowStore(admin);
      backend = createNodeRedRunBackend({ admin });
    }

    let server: Awaited<ReturnType<typeof createRedflowServer>> | undefined;
    // Loaded only with --mcp: a server without it never loads the MCP SDK.
    const mcp = values.mcp === true ? await mcpEndpoint(() => server?.url ?? `http://${host}:${port}/`, output) : undefined;
    try {
      server = await createRedflowServer({
        ...(flows !== undefined && { flows }),
        flowsDir,
        runsDir,
        host,
        port,
        ...(token !== undefined && { token }),
        allowFiles: allowedFolders(values),
        steps: createStepService({ logs: stepLogs, models: stepModels, ...(workspace !== undefined && { workspace }) }),
        ...(backend !== undefined && { backend }),
        ...(inspector !== undefined && backend === undefined && { inspector }),
        ...(values.verbose === true && { logRequest: log }),
        ...(mcp !== undefined && { mcp }),
        ...(values.a2a === true && { a2a: true }),
        ...(values['allow-mcp-commands'] === true && { allowMcpCommands: true }),
        logError: (text) => line(output.err, s.red(text)),
      });
    } catch (error) {
      await backend?.close().catch(() => undefined);
      await closeNats();
      await closeSession();
      throw error;
    }
    line(output.out, `redflow serve: ${s.bold(server.url)}`);
    if (mcp !== undefined) line(output.out, `MCP (Streamable HTTP): ${s.bold(new URL(MCP_PATH, server.url).href)}`);
    line(
      output.err,
      s.dim(
        `${
          nodeRedUrl !== undefined
            ? `flows and runs in Node-RED at ${nodeRedUrl}`
            : `${nats === undefined ? `embedded runs, logs in ${path.relative(process.cwd(), runsDir) || runsDir}` : `runs on the NATS cluster at ${nats}`}; flows in ${path.relative(process.cwd(), flowsDir) || flowsDir}`
        }; ${token === undefined ? 'no token' : 'token required'}; Ctrl-C stops`,
      ),
    );
    if (values.open === true) openBrowser(server.url);

    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    // A second Ctrl-C while runs are being aborted quits at once.
    process.once('SIGINT', () => process.exit(ExitCode.Interrupted));
    // Embedded runs live in this process and are aborted; a cluster's runs are only watched from here.
    log(`${signal}: stopping (runs under way ${nodeRedUrl !== undefined ? 'go on in Node-RED' : nats === undefined ? 'are aborted' : 'go on on the cluster'})`);
    const running = server;
    await stopServing(() => running.close());
    await closeSession();
    exitAfterGrace(ExitCode.Ok);
    return ExitCode.Ok;
  },
};

/**
 * On a cluster the statechart runs in a core worker, out of this process's reach: each run this
 * server starts is followed and its events replayed into the inspector as they arrive.
 */
function followedIntoInspector(backend: RunBackend, session: InspectSession): RunBackend {
  return {
    ...backend,
    mode: backend.mode,
    async start(request) {
      const started = await backend.start(request);
      const replay = session.follow();
      // Until the run ends or the backend closes; the inspector is a view: its failure is not the run's.
      void (async () => {
        for await (const event of backend.follow(started.traceId, 0)) replay(event);
      })().catch(() => undefined);
      return started;
    },
  };
}

/** The `/mcp` endpoint of `--mcp`, with each flow it leaves out warned of on stderr. */
async function mcpEndpoint(url: () => string, output: Output): Promise<NonNullable<RedflowServerOptions['mcp']>> {
  const { createMcpHttpEndpoint } = await import('../mcpServer/mcpHttpEndpoint.js');
  const s = styles(output.color);
  return (ports) =>
    createMcpHttpEndpoint({
      ...ports,
      howToAnswer: answerOnServer(url),
      onSkipped: (flow) => line(output.err, s.yellow(`warning ${flow.error.code}: MCP: the flow "${flow.flowId}" is not offered: ${flow.error.message}`)),
    });
}

function portOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n > 65535) throw usageError(`--port must be a whole number from 0 to 65535, not "${value}"`, serveUsage);
  return n;
}

