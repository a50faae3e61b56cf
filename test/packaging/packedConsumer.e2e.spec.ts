import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The package as users get it: `npm pack` (of the dist/ that `npm test` builds), installed with
// npm into an empty project — without the optional peers pg and tsx — then used from TypeScript
// (strict, skipLibCheck off) and from Node. npm takes redflow's dependencies from its cache when it
// can (--prefer-offline), else from the registry.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/**
 * The environment of the npm commands: the PATH without node_modules/.bin folders, so that `npm` is
 * the one installed with Node, not a copy some dev dependency brings (node-red's npm 10 runs
 * `prepare` despite --ignore-scripts when it packs).
 */
const npmEnv = {
  ...process.env,
  PATH: (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((folder) => !folder.split(path.sep).includes('node_modules'))
    .join(path.delimiter),
};

let dir: string;
let project: string;
let tarballFiles: string[];

/** What a consumer writes: every subpath imported, and `onEvent` narrowing events by their type. */
const CONSUMER_TS = `
import { runFlowFile, AgentEventType, ErrorCode, RedflowError, type AgentEvent, type ToolDefinition } from 'redflow';
import { createRedflowServer, ApiRoute, type RunResponse } from 'redflow/server';
import { openInspectSession, DEFAULT_RELAY_PORT } from 'redflow/inspect';
import { connectNats, createNatsTransport, openJetStreamEventStore, createNatsRunBackend, openRunLeases, createRequestMux, requestRunAbort } from 'redflow/nats';
import { createPostgresTool, type PostgresPool, type PostgresToolOutput } from 'redflow/postgres';

function describeEvent(event: AgentEvent): string {
  switch (event.type) {
    case 'tool.requested':
      return \`\${event.data.tool}(\${JSON.stringify(event.data.input)}) at \${event.data.confidence}\`;
    case 'tool.completed':
      return event.data.ok ? \`\${event.data.tool} ok in \${event.data.durationMs} ms\` : \`\${event.data.tool}: \${event.data.error?.code ?? '?'}\`;
    case 'model.answered':
      return event.data.text.slice(0, 40);
    case AgentEventType.RunCompleted:
    case AgentEventType.RunFailed:
      return event.data.outcome.status;
    default:
      return event.type;
  }
}

const echo: ToolDefinition<{ text: string }> = {
  name: 'echo',
  description: 'Echoes',
  inputSchema: { type: 'object' },
  execute: ({ text }) => ({ text }),
};

export async function main(pool: PostgresPool): Promise<string[]> {
  const lines: string[] = [];
  const run = await runFlowFile({
    flowPath: 'flow.json',
    input: 'hello',
    onEvent: (event) => {
      lines.push(describeEvent(event));
      if (event.type === 'run.started') lines.push(event.data.agent.strategy);
    },
  });
  const { outcome } = await run.finished();
  lines.push(outcome.status);
  const tool = createPostgresTool({ name: 'q', query: 'select 1', inputSchema: { type: 'object' } }, { pool });
  const output: PostgresToolOutput = await tool.execute({}, { traceId: 't', iteration: 1, idempotencyKey: 't:1', signal: new AbortController().signal });
  lines.push(String(output.rowCount), ApiRoute.health, String(DEFAULT_RELAY_PORT), echo.name, ErrorCode.DEPENDENCY_MISSING);
  void [createRedflowServer, openInspectSession, connectNats, createNatsTransport, openJetStreamEventStore, createNatsRunBackend, openRunLeases, createRequestMux, requestRunAbort, RedflowError];
  const response: RunResponse | undefined = undefined;
  void response;
  return lines;
}
`;

/** What a consumer runs without pg and tsx: flows that need neither work; those that do fail with DEPENDENCY_MISSING. */
const CONSUMER_MJS = `
import { runFlowFile } from 'redflow';
const subpaths = {};
for (const name of ['redflow/server', 'redflow/inspect', 'redflow/nats', 'redflow/postgres']) {
  subpaths[name] = Object.keys(await import(name)).length;
}
const examples = 'node_modules/redflow/examples';
async function attempt(flowPath, env) {
  try {
    const run = await runFlowFile({ flowPath, input: 'Where is order A-1001?', env: { ...process.env, ...env }, logPath: \`runs/\${Math.random()}.jsonl\` });
    return { outcome: (await run.finished()).outcome };
  } catch (error) {
    return { code: error.code, message: error.message, hint: error.hint };
  }
}
const plain = await attempt('flow.json');
// A TypeScript tool inside node_modules: Node's own type stripping refuses it on every Node, so tsx is needed.
const typescript = await attempt(\`\${examples}/a2a-agent/flow.json\`);
const postgres = await attempt(\`\${examples}/postgres-orders/flow.json\`, { DATABASE_URL: 'postgres://127.0.0.1:9/none' });
// redflow serve answers a run it cannot start for want of a package with 503 and the same code.
const { createRedflowServer } = await import('redflow/server');
const server = await createRedflowServer({ flowsDir: examples, runsDir: 'runs', port: 0, logRequest: () => {} });
const response = await fetch(new URL('api/runs', server.url), {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ flow: 'a2a-agent/flow', input: 'Refund order A-1001' }),
});
const api = { status: response.status, body: await response.json() };
await server.close();
process.stdout.write(JSON.stringify({ subpaths, plain, typescript, postgres, api }));
`;

/** A flow that needs neither optional peer: a JavaScript tool module and a scripted model. */
const FLOW = {
  id: 'echo',
  version: 1,
  start: 'question',
  nodes: [
    { id: 'question', type: 'trigger.input' },
    { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3, allowedTools: ['echo'] } },
    {
      id: 'model',
      type: 'model.llm',
      config: { provider: 'scripted', answersFile: 'answers.json' },
    },
    { id: 'echo', type: 'tool.module', config: { module: 'echo.mjs' } },
    { id: 'reply', type: 'response.chat', config: { format: 'text' } },
  ],
  edges: [
    { id: 'e1', source: 'question', target: 'agent' },
    { id: 'e2', source: 'agent', target: 'model' },
    { id: 'e3', source: 'agent', target: 'echo' },
    { id: 'e4', source: 'agent', target: 'reply' },
  ],
};
const ANSWERS = [
  { action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.6 },
  { action: 'final', message: 'said hi', confidence: 0.9 },
];
const ECHO_MJS = `export default { name: 'echo', description: 'Echoes its text', inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } }, execute: ({ text }) => ({ text }) };\n`;

async function versionOf(name: string): Promise<string> {
  return (JSON.parse(await readFile(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-packed-'));
  project = path.join(dir, 'consumer');
  await mkdir(project);
  // --ignore-scripts: `prepare` would build again; `npm test` has built dist/ already.
  const { stdout } = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, env: npmEnv, maxBuffer: 64 * 1024 * 1024 });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarballFiles = (packed?.files ?? []).map((file) => file.path);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run(
    npm,
    ['install', path.join(dir, packed?.filename ?? ''), `@types/node@${await versionOf('@types/node')}`, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'],
    { cwd: project, env: npmEnv, maxBuffer: 64 * 1024 * 1024 },
  );
  await writeFile(path.join(project, 'flow.json'), JSON.stringify(FLOW));
  await writeFile(path.join(project, 'answers.json'), JSON.stringify(ANSWERS));
  await writeFile(path.join(project, 'echo.mjs'), ECHO_MJS);
}, 240_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('should ship a LICENSE and no source map that points at sources it does not ship', async () => {
    expect(tarballFiles).toContain('LICENSE');
    expect(tarballFiles).toContain('dist/index.d.ts');
    expect(tarballFiles.some((file) => file.startsWith('src/'))).toBe(false);
    const installed = path.join(project, 'node_modules', 'redflow');
    for (const file of tarballFiles.filter((name) => name.endsWith('.map'))) {
      const map = JSON.parse(await readFile(path.join(installed, file), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      map.sources.forEach((source, index) => {
        const shipped = tarballFiles.includes(path.posix.join(path.posix.dirname(file), source));
        expect(shipped || typeof map.sourcesContent?.[index] === 'string', `${file} points at ${source}`).toBe(true);
      });
    }
  });

  it('should install without pg and tsx, its optional peers', async () => {
    const modules = await readdir(path.join(project, 'node_modules'));
    expect(modules).not.toContain('pg');
    expect(modules).not.toContain('tsx');
    const manifest = JSON.parse(await readFile(path.join(project, 'node_modules', 'redflow', 'package.json'), 'utf8')) as {
      peerDependenciesMeta: Record<string, { optional: boolean }>;
    };
    expect(manifest.peerDependenciesMeta).toEqual({ '@opentelemetry/api': { optional: true }, pg: { optional: true }, tsx: { optional: true } });
  });

  it('should type-check a consumer (strict, skipLibCheck off) that imports every subpath and narrows AgentEvent by type', async () => {
    await writeFile(path.join(project, 'consumer.ts'), CONSUMER_TS);
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          strict: true,
          skipLibCheck: false,
          noEmit: true,
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((error: { stdout: string }) => error);
    expect(result.stdout).toBe('');
  }, 120_000);

  it('should run flows without pg and tsx, and say `npm install pg` / `npm install tsx` for flows that need them', async () => {
    await writeFile(path.join(project, 'check.mjs'), CONSUMER_MJS);
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: project });
    const report = JSON.parse(stdout) as Record<string, { code?: string; hint?: string; message?: string; outcome?: { status: string; answer?: string }; status?: number }> & {
      subpaths: Record<string, number>;
    };
    for (const count of Object.values(report.subpaths)) expect(count).toBeGreaterThan(0);
    expect(report.plain?.outcome).toMatchObject({ status: 'done', answer: 'said hi' });
    expect(report.typescript).toMatchObject({ code: 'DEPENDENCY_MISSING', hint: expect.stringContaining('npm install tsx') });
    expect(report.typescript?.message).toContain("'tsx'");
    expect(report.postgres).toMatchObject({ code: 'DEPENDENCY_MISSING', hint: expect.stringContaining('npm install pg') });
    expect(report.api).toMatchObject({ status: 503, body: { error: { code: 'DEPENDENCY_MISSING' } } });
  }, 60_000);

  it('should give the installed redflow command an exit code and hint for a missing optional peer', async () => {
    const bin = path.join(project, 'node_modules', '.bin', 'redflow');
    const ok = await run(bin, ['run', 'flow.json', '--input', 'hello'], { cwd: project });
    expect(ok.stdout).toContain('said hi');
    const failed = await run(bin, ['run', 'node_modules/redflow/examples/a2a-agent/flow.json', '--input', 'Refund order A-1001'], { cwd: project }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(69);
    expect(failed?.stderr).toContain('DEPENDENCY_MISSING');
    expect(failed?.stderr).toContain('npm install tsx');
    // Telemetry asked for with no OpenTelemetry SDK in the process: the run goes on, nothing is exported.
    const telemetry = await run(bin, ['run', 'flow.json', '--input', 'hello'], { cwd: project, env: { ...process.env, REDFLOW_OTEL: '1' } });
    expect(telemetry.stdout).toContain('said hi');
    expect(telemetry.stderr).toContain('no OpenTelemetry SDK is registered');
  }, 60_000);
});

