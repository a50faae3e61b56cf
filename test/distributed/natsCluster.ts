import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../../src/nats/connect.js';
import { NATS_SERVER_BIN, freePort } from '../nats/natsSupport.js';
import type { ServerNetwork } from './netns.js';

// A real three-server NATS cluster on this machine for the cluster tests: three nats-server
// processes routed to each other over loopback on free high ports, each with its JetStream store
// in a temporary folder and a server tag (az:a, az:b, az:c) placements can name. A test kills,
// pauses and restarts them as real faults. Given a ServerNetwork (netns.ts), each server runs in
// its own network namespace at its own address instead, and a test can cut it off (partition).

/** One server of a {@link NatsCluster}. */
export interface ClusterServer {
  /** `n1`, `n2`, `n3`: its server_name, as JetStream names stream leaders. */
  readonly name: string;
  /** `az:a`, `az:b`, `az:c`. */
  readonly tag: string;
  /** `<host>:<port>`: for clients (`127.0.0.1`, or its namespace's address). */
  readonly url: string;
  /** `http://<host>:<port>`: its monitoring endpoint (`/connz`, `/jsz`). */
  readonly monitor: string;
  readonly process: () => ChildProcess | undefined;
}

/** A running three-server cluster. */
export interface NatsCluster {
  readonly servers: readonly ClusterServer[];
  /** Every client URL, comma-separated: what `--nats` takes to fail over between them. */
  readonly urls: string;
  /** kill -9 of a server (its store stays for a restart). */
  kill(name: string): Promise<void>;
  /** SIGSTOP: the process stays, answers nothing, its connections stay open. */
  pause(name: string): void;
  /** SIGCONT after {@link pause}. */
  resume(name: string): void;
  /** Starts a killed server again, from its store, and resolves once it is ready. */
  start(name: string): Promise<void>;
  /** Stops a server the way an orchestrator does (SIGTERM) and starts it again. */
  restart(name: string): Promise<void>;
  /** Drops every packet to and from a server (only on a cluster started with a network). */
  isolate(name: string): void;
  /** Undoes {@link isolate}. */
  heal(name: string): void;
  /** Resolves once every running server sees a JetStream meta leader. */
  ready(ms?: number): Promise<void>;
  /** Kills every server and removes the stores. */
  close(): Promise<void>;
}

interface Node {
  readonly name: string;
  /** The address it listens on, and the namespace it runs in (undefined: this one). */
  readonly host: string;
  readonly namespace?: string;
  readonly tag: string;
  readonly port: number;
  readonly routePort: number;
  readonly monitorPort: number;
  readonly config: string;
  child?: ChildProcess;
}

/**
 * Starts three clustered nats-servers with JetStream and resolves once they have a meta leader.
 *
 * @example
 * ```ts
 * const cluster = await startNatsCluster();
 * const nc = await connectNats({ servers: cluster.urls.split(',') });
 * ```
 */
export async function startNatsCluster(options: { network?: ServerNetwork } = {}): Promise<NatsCluster> {
  const { network } = options;
  const dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-'));
  const names = ['n1', 'n2', 'n3'];
  const ports = await Promise.all(names.map(async () => ({ port: await freePort(), routePort: await freePort(), monitorPort: await freePort() })));
  const hostOf = (i: number) => network?.hosts[i]?.address ?? '127.0.0.1';
  const routes = ports.map(({ routePort }, i) => `"nats-route://${hostOf(i)}:${routePort}"`).join(', ');
  const nodes: Node[] = [];
  for (const [i, name] of names.entries()) {
    const { port, routePort, monitorPort } = ports[i]!;
    const host = hostOf(i);
    const tag = `az:${'abc'[i]}`;
    const config = path.join(dir, `${name}.conf`);
    await writeFile(
      config,
      [
        `server_name: ${name}`,
        `listen: "${host}:${port}"`,
        `http: "${host}:${monitorPort}"`,
        `server_tags: ["${tag}"]`,
        `jetstream { store_dir: "${path.join(dir, name)}", max_memory_store: 64MB, max_file_store: 1GB }`,
        `cluster { name: redflow-test, listen: "${host}:${routePort}", routes: [${routes}] }`,
        '',
      ].join('\n'),
    );
    nodes.push({ name, tag, host, namespace: network?.hosts[i]?.namespace, port, routePort, monitorPort, config });
  }
  const node = (name: string): Node => {
    const found = nodes.find((n) => n.name === name);
    if (!found) throw new Error(`no server ${name} in the cluster`);
    return found;
  };
  const launch = async (n: Node): Promise<void> => {
    // `ip netns exec` execs the server in place: the child's pid is the server's, for the signals.
    const [command, args] = n.namespace === undefined ? [NATS_SERVER_BIN, ['-c', n.config]] : ['ip', ['netns', 'exec', n.namespace, NATS_SERVER_BIN, '-c', n.config]];
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    n.child = child;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`${n.name} did not start: ${output}`)), 10_000);
      child.once('error', (error) => reject(new Error(`these tests start nats-server; install it or set NATS_SERVER_BIN (${error.message})`)));
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Server is ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`${n.name} exited (${String(code)}): ${output}`)));
    });
  };
  const running = () => nodes.filter((n) => n.child !== undefined && n.child.exitCode === null && n.child.signalCode === null);
  // A meta leader, and JetStream answering clients of this server (a server catching up answers 503).
  const hasMetaLeader = async (n: Node): Promise<boolean> => {
    try {
      const response = await fetch(`http://${n.host}:${n.monitorPort}/jsz`, { signal: AbortSignal.timeout(1000) });
      const body = (await response.json()) as { meta_cluster?: { leader?: string } };
      if (typeof body.meta_cluster?.leader !== 'string' || body.meta_cluster.leader === '') return false;
      const nc = await connectNats({ servers: `${n.host}:${n.port}`, name: 'cluster-ready', timeoutMs: 1000 });
      try {
        await (await jetstreamManager(nc, { timeout: 1000 })).getAccountInfo();
        return true;
      } finally {
        await nc.close();
      }
    } catch {
      return false;
    }
  };
  const cluster: NatsCluster = {
    servers: nodes.map((n) => ({ name: n.name, tag: n.tag, url: `${n.host}:${n.port}`, monitor: `http://${n.host}:${n.monitorPort}`, process: () => n.child })),
    urls: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    async kill(name) {
      const child = node(name).child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
    isolate(name) {
      if (!network) throw new Error('isolate needs a cluster started with a network (netns.ts)');
      network.isolate(nodes.indexOf(node(name)));
    },
    heal(name) {
      network?.heal(nodes.indexOf(node(name)));
    },
    pause: (name) => void node(name).child?.kill('SIGSTOP'),
    resume: (name) => void node(name).child?.kill('SIGCONT'),
    async start(name) {
      await launch(node(name));
    },
    async restart(name) {
      const child = node(name).child;
      if (child && child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      await launch(node(name));
    },
    async ready(ms = 20_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const all = await Promise.all(running().map(hasMetaLeader));
        if (all.every(Boolean)) return;
        if (Date.now() > deadline) throw new Error(`no JetStream meta leader within ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async close() {
      for (const n of nodes) {
        n.child?.kill('SIGCONT');
        await cluster.kill(n.name);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(nodes.map(launch));
    await cluster.ready();
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

/**
 * The server that leads `stream` (a stream's or a KV bucket's `KV_<bucket>`), as JetStream says.
 *
 * @example
 * ```ts
 * await cluster.kill(await streamLeader(nc, 'REDFLOW_TRACE'));
 * ```
 */
export async function streamLeader(nc: NatsConnection, stream: string): Promise<string> {
  const info = await (await jetstreamManager(nc)).streams.info(stream);
  const leader = info.cluster?.leader;
  if (leader === undefined || leader === '') throw new Error(`stream ${stream} has no leader now`);
  return leader;
}

/** Resolves once `stream` has a leader with all its replicas current, or fails after `ms`. */
export async function streamSettled(nc: NatsConnection, stream: string, ms = 20_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      const info = await (await jetstreamManager(nc, { timeout: 1000 })).streams.info(stream);
      const replicas = info.cluster?.replicas ?? [];
      if (info.cluster?.leader && replicas.every((replica) => replica.current && !replica.offline)) return Date.now() - started;
    } catch {
      // No leader yet: an election is under way.
    }
    if (Date.now() - started > ms) throw new Error(`stream ${stream} did not settle within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once every stream of the account (the trace stream and every KV bucket) has settled. */
export async function allStreamsSettled(nc: NatsConnection, ms = 30_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      const names: string[] = [];
      for await (const name of (await jetstreamManager(nc, { timeout: 1000 })).streams.names()) names.push(name);
      for (const name of names) await streamSettled(nc, name, Math.max(1000, ms - (Date.now() - started)));
      return Date.now() - started;
    } catch (error) {
      if (Date.now() - started > ms) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
