import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { parse } from 'yaml';
import { connectNats } from '../../src/nats/connect.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { freePort, startNatsServer, type PrivateNatsServer } from '../nats/natsSupport.js';

// The `cluster` profile of docker-compose.yml without Docker: its three servers' configuration
// (deploy/compose/nats-cluster.conf) run as three nats-servers on this machine, routed as compose
// routes them, and its workers' settings.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Service {
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
}

describe("docker-compose.yml's cluster profile", () => {
  it('should run workers that fail over between the three servers and keep three replicas', async () => {
    const { services } = parse(await readFile(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
    for (const name of ['nats-1', 'nats-2', 'nats-3', 'core-cluster', 'models-cluster', 'tools-cluster']) expect(services[name]?.profiles, name).toEqual(['cluster']);
    for (const name of ['core-cluster', 'models-cluster', 'tools-cluster']) {
      expect(services[name]?.environment?.NATS_URL, name).toBe('nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222');
    }
    // The workers that create the stream and buckets (core, tool) ask for three replicas.
    expect(services['core-cluster']?.environment?.REDFLOW_REPLICAS).toBe('3');
    expect(services['tools-cluster']?.environment?.REDFLOW_REPLICAS).toBe('3');
    expect(['nats-1', 'nats-2', 'nats-3'].map((name) => services[name]?.environment?.REDFLOW_NATS_SERVER_NAME)).toEqual(['nats-1', 'nats-2', 'nats-3']);
  });

  it('should form a cluster from deploy/compose/nats-cluster.conf that keeps a stream with three replicas (the 2.10+ sync_interval aside)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-compose-cluster-'));
    const servers: PrivateNatsServer[] = [];
    try {
      const routePorts = [await freePort(), await freePort(), await freePort()];
      const passwords = Object.fromEntries(['CORE', 'CLIENT', 'MODEL', 'TOOL', 'TOOL_LOOKUP'].map((user) => [`REDFLOW_${user}_PASSWORD`, `p${randomBytes(8).toString('hex')}`]));
      await copyFile(path.join(root, 'deploy/nats/redflow.conf'), path.join(dir, 'redflow.conf'));
      const text = await readFile(path.join(root, 'deploy/compose/nats-cluster.conf'), 'utf8');
      for (const [i, name] of ['nats-1', 'nats-2', 'nats-3'].entries()) {
        // As compose runs it, with loopback ports for the compose service names.
        const local = text
          .replace(/^\s*sync_interval:.*$/m, '')
          .replace(/store_dir: \/data/, `store_dir: ${JSON.stringify(path.join(dir, name))}`)
          .replace(/^http_port: 8222$/m, `http_port: ${await freePort()}`)
          .replace(/listen: 0\.0\.0\.0:6222/, `listen: 127.0.0.1:${routePorts[i]}`)
          .replace(/nats-route:\/\/nats-(\d):6222/g, (_match, n: string) => `nats-route://127.0.0.1:${routePorts[Number(n) - 1]}`);
        await writeFile(path.join(dir, `${name}.conf`), local);
        servers.push(await startNatsServer(path.join(dir, `${name}.conf`), { ...passwords, REDFLOW_NATS_SERVER_NAME: name, REDFLOW_NATS_STORE_DIR: path.join(dir, name) }));
      }
      const nc = await connectNats({ servers: servers.map((server) => server.url), user: 'core', pass: passwords.REDFLOW_CORE_PASSWORD, inboxPrefix: '_INBOX_core', timeoutMs: 2000 });
      try {
        let info;
        for (let tries = 0; info === undefined; tries++) {
          // A cluster that has just formed elects its JetStream meta leader first.
          info = await openJetStreamEventStore(nc, { replicas: 3 })
            .then(async (store) => (await jetstreamManager(nc)).streams.info(store.stream))
            .catch(async (error: unknown) => {
              if (tries > 100) throw error;
              await new Promise((resolve) => setTimeout(resolve, 200));
              return undefined;
            });
        }
        expect(info.config.num_replicas).toBe(3);
        expect(info.cluster?.name).toBe('redflow');
      } finally {
        await nc.close();
      }
    } finally {
      for (const server of servers) await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
