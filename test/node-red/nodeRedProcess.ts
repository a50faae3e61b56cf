import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * The environment for npm: PATH without `node_modules/.bin`, where vitest's PATH has the npm 10
 * that Node-RED depends on, not the user's npm (and that one runs `prepare` on `npm pack`).
 */
const npmEnv = { ...process.env, PATH: (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.includes(`node_modules${path.sep}.bin`)).join(path.delimiter) };

/** Runs a command; a failure says what it printed. */
async function run(command: string, args: readonly string[], options: { cwd: string; timeout?: number }): Promise<{ stdout: string }> {
  try {
    return await execFileAsync(command, args, { ...options, env: npmEnv });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${options.cwd}:\n${stderr ?? ''}${stdout ?? ''}`, { cause: error });
  }
}

// What the tests running a real Node-RED process share: the packages packed and installed into a
// fresh user directory as a user would, and Node-RED started (and killed) as a process.

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A Node-RED to run: its `red.js` and the Node.js that runs it. */
export interface NodeRedInstall {
  readonly label: string;
  /** What the version its Admin API reports starts with, so a test knows which Node-RED it ran. */
  readonly version: string;
  readonly redJs: string;
  readonly node: string;
}

/**
 * The Node-RED versions the tests run: the 4.1 this repository depends on, with this Node.js; and,
 * when `REDFLOW_NODE_RED_5` (a Node-RED 5 package folder) and `REDFLOW_NODE_22` (a Node.js ≥ 22.9
 * binary) are set, Node-RED 5 on that Node.js.
 */
export function nodeRedInstalls(): NodeRedInstall[] {
  const installs: NodeRedInstall[] = [{ label: 'Node-RED 4.1', version: '4.1.', redJs: path.join(ROOT, 'node_modules/node-red/red.js'), node: process.execPath }];
  const five = process.env.REDFLOW_NODE_RED_5;
  const node22 = process.env.REDFLOW_NODE_22;
  if (five !== undefined && node22 !== undefined) installs.push({ label: 'Node-RED 5', version: '5.', redJs: path.join(five, 'red.js'), node: node22 });
  return installs;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Every file under `dir` (skipping `node_modules`), sorted: what a pack of it holds. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && !path.relative(dir, entry.parentPath).split(path.sep).includes('node_modules'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/** A digest of what `npm pack` puts in the two packages: their package.json and their packed folders. */
async function packedContentDigest(): Promise<string> {
  const hash = createHash('sha256');
  const rootPackage = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const files = [path.join(ROOT, 'package.json'), ...(await Promise.all(rootPackage.files.map((dir) => filesUnder(path.join(ROOT, dir))))).flat(), ...(await filesUnder(path.join(ROOT, 'node-red')))];
  for (const file of files) hash.update(path.relative(ROOT, file)).update('\0').update(await readFile(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * `redflow` and `node-red-contrib-redflow` installed from their packed tarballs (`npm pack` of this
 * repository and of `node-red/`), as `npm install` would from the registry, into a folder shared by
 * every test file that runs a Node-RED: packing and installing take 15–30 s, so it is done once per
 * content of the packages (their digest names the folder) and reused while nothing in them changes.
 */
async function installedRedflow(): Promise<string> {
  const cache = path.join(os.tmpdir(), 'redflow-node-red-e2e', await packedContentDigest());
  if (existsSync(path.join(cache, 'node_modules'))) return cache;
  const work = await mkdtemp(path.join(os.tmpdir(), 'redflow-node-red-e2e-'));
  const packs = path.join(work, 'packs');
  const install = path.join(work, 'install');
  await mkdir(packs);
  await mkdir(install);
  const pack = async (dir: string): Promise<string> => {
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', packs], { cwd: dir });
    return path.join(packs, stdout.trim().split('\n').pop() ?? '');
  };
  const tarballs = [await pack(ROOT), await pack(path.join(ROOT, 'node-red'))];
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel', 'error', ...tarballs], { cwd: install, timeout: 120_000 });
  await mkdir(path.dirname(cache), { recursive: true });
  // Whole or not at all: another process may have finished the same install meanwhile.
  await rename(install, cache).catch((error: unknown) => {
    if (!existsSync(path.join(cache, 'node_modules'))) throw error;
  });
  await rm(work, { recursive: true, force: true });
  return cache;
}

/**
 * A fresh Node-RED user directory with `redflow` and `node-red-contrib-redflow` installed in it
 * from their packed tarballs. Its `node_modules` is a link to the shared install
 * ({@link installedRedflow}); what Node-RED writes (settings, flows, credentials) stays in the
 * directory of its own. The built `dist/` is what gets packed.
 */
export async function userDirWithRedflow(): Promise<string> {
  if (!existsSync(path.join(ROOT, 'dist/nodeRed/index.js'))) {
    throw new Error('dist/nodeRed is not built: run `npx tsc -p tsconfig.build.json` (npm test builds first)');
  }
  const installed = await installedRedflow();
  const userDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'redflow-node-red-e2e-')), 'userDir');
  await mkdir(userDir);
  await cp(path.join(installed, 'package.json'), path.join(userDir, 'package.json'));
  await symlink(path.join(installed, 'node_modules'), path.join(userDir, 'node_modules'), 'dir');
  return userDir;
}

/** A running Node-RED process. */
export interface NodeRedProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it printed. */
  output(): string;
  /** `kill -9`: no close handler runs. */
  kill(): Promise<void>;
  /** A clean stop (SIGINT, as Ctrl-C). */
  stop(): Promise<void>;
}

/** More for {@link startNodeRed}: settings (such as `adminAuth`), and variables of its environment. */
export interface NodeRedExtras {
  readonly settings?: Record<string, unknown>;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts Node-RED on `userDir` and `port` with a settings file written for it (listening on
 * 127.0.0.1, a fixed credential secret, logs that say when a node fails, nothing in the editor's way), and
 * resolves once its admin API answers.
 */
export async function startNodeRed(install: NodeRedInstall, userDir: string, port: number, redflow: Record<string, unknown> = {}, extras: NodeRedExtras = {}): Promise<NodeRedProcess> {
  const settings = path.join(userDir, 'settings.js');
  await writeFile(
    settings,
    `module.exports = ${JSON.stringify(
      {
        uiHost: '127.0.0.1',
        uiPort: port,
        flowFile: 'flows.json',
        credentialSecret: 'redflow-e2e-secret',
        logging: { console: { level: 'warn' } },
        // Nothing over the editor in the browser tests (no welcome tour, no telemetry question), and no catalogue fetched.
        editorTheme: { tours: false, palette: { catalogues: [] } },
        telemetry: { enabled: false },
        redflow,
        ...extras.settings,
      },
      null,
      2,
    )};\n`,
  );
  const child = spawn(install.node, [install.redJs, '--userDir', userDir, '--settings', settings], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '', ...extras.env } });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Node-RED exited (${child.exitCode}):\n${output}`);
    // With adminAuth on, /settings asks for a login: an answer all the same.
    const ready = await fetch(`${url}/settings`).then((response) => response.ok || response.status === 401, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`Node-RED did not answer within 30 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}

/** Deploys `flows` (a full deploy) through Node-RED's Admin API. */
export async function deployFlows(url: string, flows: readonly unknown[]): Promise<void> {
  const response = await fetch(`${url}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
    body: JSON.stringify(flows),
  });
  if (!response.ok) throw new Error(`deploy failed: ${response.status} ${await response.text()}`);
}

/** Presses an inject node's button, through the Admin API (once the node has started after a deploy). */
export async function inject(url: string, nodeId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await fetch(`${url}/inject/${nodeId}`, { method: 'POST' });
    if (response.ok) return;
    if (response.status !== 404 || Date.now() > deadline) throw new Error(`inject failed: ${response.status} ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
