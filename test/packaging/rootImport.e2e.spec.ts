import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// `import 'redflow'` loads what an embedded run needs and nothing more: no HTTP server, no
// inspector, no WebSocket, no PostgreSQL driver, no NATS client, no provider SDK, no OpenTelemetry
// (loaded only when telemetry is turned on). Checked on the built package (dist/, as `npm test`
// builds it) in a fresh Node process, by scripts/loaded-modules.mjs, which lists every file the
// import loaded and Node's own modules.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

/**
 * Files `import 'redflow'` may load at most: 242 before the subpaths, 148 after them, 164 a few
 * features later (63 of them ajv's, 8 xstate's). Raise it only for code every embedded run needs;
 * what only some runs need is imported where it is used (see buildTools, the model providers).
 * 203 with verification: the statechart's `verifying` state (machines/verification.js), its fold
 * (events/evolveParts.js) and a definition's settings (agents/definitionParts.js) are part of
 * the machine and the definitions every run loads; they cannot be imported lazily.
 * 135 once ajv (63 files, 68 with its dependencies) is required where a schema is first compiled:
 * nothing is checked against a schema while the package loads (136 with the TypeScript module loader).
 * 137 with host/forkChanges.js: `resumeFromLog` re-applies a fork's changes from its log, so a
 * killed fork resumes as it ran. Still 137 with contracts/plainSchema.js (plain tool schemas are
 * checked without ajv) since the TypeScript module loader now waits for a flow's first tool.module.
 * 130 once the OpenAI and Anthropic actors load their streaming halves (and the incremental JSON
 * reader) with their first call.
 */
const MAX_ROOT_MODULES = 130;

interface Loaded {
  readonly count: number;
  readonly files: readonly string[];
  readonly builtins: readonly string[];
}

async function loadedBy(target: string): Promise<Loaded> {
  const { stdout } = await run(process.execPath, [path.join(root, 'scripts/loaded-modules.mjs'), target], { cwd: root });
  return JSON.parse(stdout) as Loaded;
}

/** The package name of a file under node_modules (`@scope/name` or `name`), else undefined. */
function packageOf(file: string): string | undefined {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
}

describe("import 'redflow'", () => {
  it('should load no server, inspector, WebSocket, PostgreSQL, NATS or provider SDK code', async () => {
    const loaded = await loadedBy('./dist/index.js');
    const packages = new Set(loaded.files.map(packageOf).filter((name) => name !== undefined));
    for (const heavy of ['pg', 'ws', '@statelyai/inspect', 'partysocket', 'superjson', '@nats-io/transport-node', '@nats-io/jetstream', 'tsx', 'openai', '@anthropic-ai/sdk', '@opentelemetry/api', '@modelcontextprotocol/sdk']) {
      expect(packages, `root import loaded ${heavy}`).not.toContain(heavy);
    }
    expect(packages, 'root import loaded ajv before any schema was compiled').not.toContain('ajv');
    const own = loaded.files.filter((file) => file.startsWith(path.join(root, 'dist') + path.sep)).map((file) => path.relative(path.join(root, 'dist'), file));
    for (const folder of ['server', 'inspect', 'cli', 'distributed', 'postgres', 'editor', path.join('actors', 'nats')]) {
      expect(own.filter((file) => file.startsWith(folder + path.sep)), `root import loaded dist/${folder}`).toEqual([]);
    }
    expect(own).not.toContain(path.join('actors', 'tools', 'postgresTool.js'));
    // Node's HTTP server and client, TLS and HTTP/2 (what the server, ws and pg pull in).
    for (const builtin of ['http', '_http_server', 'https', 'http2', 'tls', 'net']) {
      expect(loaded.builtins, `root import loaded node:${builtin}`).not.toContain(builtin);
    }
    expect(loaded.count).toBeLessThanOrEqual(MAX_ROOT_MODULES);
    // The embedded runtime itself is there: the check would pass vacuously on an empty file otherwise.
    expect(own).toEqual(expect.arrayContaining(['index.js', path.join('host', 'embeddedFlowRun.js'), path.join('machines', 'reactMachine.js')]));
    expect(packages).toContain('xstate');
  });

  it('should leave the MCP SDK to `redflow mcp` and `serve --mcp`: `redflow --version` (the CLI\'s entry) does not load it', async () => {
    const cli = await loadedBy('./dist/cli/main.js');
    expect(cli.files.map(packageOf)).not.toContain('@modelcontextprotocol/sdk');
    // The command table names the commands; each command's module loads when it runs.
    expect(cli.files.filter((file) => file.includes(`${path.sep}mcpServer${path.sep}`))).toEqual([]);
    // Nor eval suites, which `redflow eval` loads when it runs.
    expect(cli.files.filter((file) => file.includes(`${path.sep}evals${path.sep}`))).toEqual([]);
  });

  it('should resolve every subpath to its entry point, each loading its own part', async () => {
    // The package refers to itself by name through its `exports`, as a consumer would.
    const server = await loadedBy('redflow/server');
    expect(server.builtins).toContain('_http_server');
    const inspect = await loadedBy('redflow/inspect');
    expect(inspect.files.map(packageOf)).toContain('@statelyai/inspect');
    const nats = await loadedBy('redflow/nats');
    expect(nats.files.map(packageOf)).toContain('@nats-io/transport-node');
    // pg itself waits for a tool's first call.
    const postgres = await loadedBy('redflow/postgres');
    expect(postgres.files.map(packageOf)).not.toContain('pg');
    expect(postgres.files.some((file) => file.endsWith(path.join('dist', 'actors', 'tools', 'postgresTool.js')))).toBe(true);
    const evals = await loadedBy('redflow/evals');
    expect(evals.files.map(packageOf)).toContain('yaml');
    expect(evals.files.some((file) => file.endsWith(path.join('dist', 'evals', 'runSuite.js')))).toBe(true);
  });
});
