import { execFile } from 'node:child_process';
import { access, readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

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
  it('should have NATS, core, model and tool workers, the editor, and PostgreSQL', async () => {
    const { services } = await compose();
    expect(Object.keys(services).sort()).toEqual(['core', 'editor', 'models', 'nats', 'postgres', 'tools']);
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
      for (const volume of service.volumes ?? []) {
        const [source] = volume.split(':');
        if (source?.startsWith('./')) await expect(access(path.join(root, source))).resolves.toBeUndefined();
      }
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

  it('should give nats-server a configuration it accepts (the 2.10+ sync_interval aside)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-compose-'));
    try {
      const text = (await readFile(path.join(root, 'deploy/compose/nats.conf'), 'utf8'))
        .replace(/^\s*sync_interval:.*$/m, '')
        .replace('/data', path.join(dir, 'store'));
      const file = path.join(dir, 'nats.conf');
      await writeFile(file, text);
      const { stdout, stderr } = await run(process.env.NATS_SERVER_BIN ?? 'nats-server', ['-c', file, '-t']);
      expect(`${stdout}${stderr}`).toContain('is valid');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
