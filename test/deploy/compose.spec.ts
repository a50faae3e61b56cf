import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, copyFile, readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { parse } from 'yaml';
import { connectNats } from '../../src/nats/connect.js';
import { freePort, startNatsServer, type PrivateNatsServer } from '../nats/natsSupport.js';

// No Docker engine runs here: these checks keep docker-compose.yml honest without one.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

interface Service {
  command?: string[];
  volumes?: string[];
  build?: string;
}

async function compose(): Promise<{ services: Record<string, Service> }> {
  return parse(await readFile(path.join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
}

describe('docker-compose.yml', () => {
  it('should have NATS, core, model and tool workers, the editor, PostgreSQL, and the three-server cluster profile', async () => {
    const { services } = await compose();
    expect(Object.keys(services).sort()).toEqual(
      ['core', 'core-cluster', 'editor', 'models', 'models-cluster', 'nats', 'nats-1', 'nats-2', 'nats-3', 'postgres', 'tools', 'tools-cluster'],
    );
  });

  it('should start the editor on the cluster with a command redflow serve accepts, and a token from the environment', async () => {
    const { services } = await compose();
    const editor = services.editor as Service & { environment?: Record<string, string>; profiles?: string[] };
    expect(editor.profiles).toEqual(['editor']);
    expect(editor.environment?.NATS_URL).toBe('nats://nats:4222');
    expect(editor.environment?.REDFLOW_TOKEN).toBe('${REDFLOW_TOKEN:-}');
    const command = editor.command ?? [];
    expect(command[0]).toBe('serve');
    const { stdout } = await run(process.execPath, [path.join(root, 'bin/redflow.js'), 'serve', '--help'], { cwd: root });
    for (const flag of command.filter((word) => word.startsWith('--'))) expect(stdout).toContain(flag);
    // The flows directory it is given holds the flow the workers host.
    await expect(access(path.join(root, command[command.indexOf('--flows') + 1] as string, 'order-status', 'flow.json'))).resolves.toBeUndefined();
  });

  it('should mount files that exist', async () => {
    const { services } = await compose();
    for (const service of Object.values(services)) {
      const sources = (service.volumes ?? []).map((volume) => volume.split(':')[0] ?? '').filter((source) => source.startsWith('./'));
      for (const source of sources) await expect(access(path.join(root, source))).resolves.toBeUndefined();
    }
    await expect(access(path.join(root, 'Dockerfile'))).resolves.toBeUndefined();
  });

  it('should give the workers commands that the redflow command accepts, for a flow that validates', async () => {
    const { services } = await compose();
    for (const name of ['core', 'models', 'tools']) {
      const command = (services[name]?.command ?? []).map((word) => word.replace(/\$\{FLOW:-([^}]+)\}/, '$1'));
      expect(command[0]).toBe('worker');
      const { stdout } = await run(process.execPath, [path.join(root, 'bin/redflow.js'), ...command, '--help'], { cwd: root });
      expect(stdout).toContain('usage: redflow worker');
      await run(process.execPath, [path.join(root, 'bin/redflow.js'), 'validate', command[1] as string], { cwd: root });
    }
  });

  it('should run nats-server on the least-privilege users, and connect every service as its role\'s user (the 2.10+ sync_interval aside)', async () => {
    const { services } = await compose();
    const nats = services.nats as Service & { environment: Record<string, string> };
    // The two files are mounted side by side, as the include expects.
    expect(nats.volumes).toEqual(
      expect.arrayContaining(['./deploy/compose/nats.conf:/etc/nats/nats.conf:ro', './deploy/nats/redflow.conf:/etc/nats/redflow.conf:ro']),
    );
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-compose-'));
    let server: PrivateNatsServer | undefined;
    const connections: NatsConnection[] = [];
    try {
      // Every password comes from the environment (`${VAR:?…}`: compose refuses to start without it).
      const passwords = new Map<string, string>();
      const resolve = (value: string) =>
        value.replace(/\$\{(REDFLOW_\w+_PASSWORD):\?[^}]*\}/g, (_match, name: string) => {
          if (!passwords.has(name)) passwords.set(name, `p${randomBytes(8).toString('hex')}`);
          return passwords.get(name) as string;
        });
      const env: Record<string, string> = {};
      const passwordVariables = Object.entries(nats.environment).filter(([name]) => name !== 'REDFLOW_NATS_STORE_DIR');
      expect(passwordVariables).not.toEqual([]);
      for (const [name, value] of passwordVariables) expect(value, name).toMatch(/^\$\{REDFLOW_\w+_PASSWORD:\?.+\}$/);
      for (const [name, value] of Object.entries(nats.environment)) {
        env[name] = name === 'REDFLOW_NATS_STORE_DIR' ? path.join(dir, 'store') : resolve(value);
      }
      const [httpPort, wsPort] = [await freePort(), await freePort()];
      const text = (await readFile(path.join(root, 'deploy/compose/nats.conf'), 'utf8'))
        .replace(/^\s*sync_interval:.*$/m, '')
        .replace(/store_dir: \/data/, `store_dir: ${JSON.stringify(path.join(dir, 'store'))}`)
        .replace(/^http_port: 8222$/m, `http_port: ${httpPort}`)
        .replace(/port: 9222/, `port: ${wsPort}`);
      await writeFile(path.join(dir, 'nats.conf'), text);
      await copyFile(path.join(root, 'deploy/nats/redflow.conf'), path.join(dir, 'redflow.conf'));
      server = await startNatsServer(path.join(dir, 'nats.conf'), env);

      const roles = { core: 'core', models: 'model', tools: 'tool', editor: 'client' };
      for (const [name, user] of Object.entries(roles)) {
        const environment = (services[name] as Service & { environment: Record<string, string> }).environment;
        expect(environment.NATS_URL, name).toBe('nats://nats:4222');
        expect(environment.NATS_USER, name).toBe(user);
        // Model workers make no requests, so they have no inbox prefix of their own.
        expect(environment.NATS_INBOX_PREFIX, name).toBe(user === 'model' ? undefined : `_INBOX_${user}`);
        const nc = await connectNats({
          servers: server.url,
          user: environment.NATS_USER,
          pass: resolve(environment.NATS_PASSWORD ?? ''),
          timeoutMs: 2000,
          ...(environment.NATS_INBOX_PREFIX !== undefined && { inboxPrefix: environment.NATS_INBOX_PREFIX }),
        });
        connections.push(nc);
      }
      // The editor is a client: it may start runs, never serve them.
      const editor = connections[3] as NatsConnection;
      const refused = new Promise<string>((done) => {
        void (async () => {
          for await (const status of editor.status()) if (status.type === 'error') done(status.error.message);
        })();
      });
      editor.subscribe('redflow.runs.start');
      expect(await refused).toMatch(/permissions violation for subscription to "redflow\.runs\.start"/i);
    } finally {
      for (const nc of connections) await nc.close();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
