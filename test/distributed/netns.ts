import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// Network namespaces for the partition tests: each nats-server of a cluster gets its own network
// namespace, joined to a bridge in this (the root) namespace by a veth pair, with an address of its
// own (10.211.<n>.11, .12, .13). Clients and workers stay in the root namespace and reach the
// servers through the bridge (10.211.<n>.1). A partition is then a real dropped link: the veth end
// inside one server's namespace is set down, so nothing it sends or is sent arrives — its process
// runs on and its TCP connections stay open, as in a cable pulled between machines. Needs root
// and iproute2 (`ip`); nothing else.

/** One server's place in a {@link ServerNetwork}. */
export interface NetworkHost {
  /** The network namespace the server runs in. */
  readonly namespace: string;
  /** Its address, which clients and the other servers reach it at. */
  readonly address: string;
}

/** Namespaces, veth pairs and a bridge, for `count` servers. */
export interface ServerNetwork {
  readonly hosts: readonly NetworkHost[];
  /** Drops every packet to and from host `i`: its veth end is set down inside its namespace. */
  isolate(i: number): void;
  /** Undoes {@link isolate}. */
  heal(i: number): void;
  /**
   * Drops every packet between hosts `i` and `j` only (a blackhole route to the other in each
   * namespace): both still reach the clients and the third host, as when one link between two
   * machines breaks.
   */
  separate(i: number, j: number): void;
  /** Drops every packet between host `i` and the clients (the bridge); the hosts still reach each other. */
  shutOut(i: number): void;
  /** Undoes every {@link separate} and {@link shutOut}. */
  mend(): void;
  /** Removes the namespaces, the veth pairs and the bridge (idempotent; also run at exit). */
  remove(): void;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * Why network namespaces cannot be used here (not root, no `ip`, the kernel refuses), or
 * `undefined` when they can: the partition tests skip with this reason.
 *
 * @example
 * ```ts
 * describe.skipIf(netnsUnavailable() !== undefined)('partitions', () => {});
 * ```
 */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the partition tests need root (ip netns, veth pairs)';
  const probe = `rfprobe${process.pid}`;
  try {
    ip('netns', 'add', probe);
    ip('link', 'add', `${probe}b`, 'type', 'bridge');
    return undefined;
  } catch (error) {
    return `this machine cannot make network namespaces and bridges: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    try {
      ip('link', 'del', `${probe}b`);
    } catch {
      // Not made.
    }
    if (existsSync(`/run/netns/${probe}`)) ip('netns', 'del', probe);
  }
}

/** The first 10.211.<n>.0/24 no route of this machine uses, starting from one the pid picks. */
function freeSubnet(): number {
  const routes = ip('-4', 'route', 'show', 'table', 'all');
  for (let k = 0; k < 250; k++) {
    const n = ((process.pid + k) % 250) + 1;
    if (!routes.includes(`10.211.${n}.`)) return n;
  }
  throw new Error('no free 10.211.<n>.0/24 subnet for the test network');
}

/**
 * Makes a namespace per server (names carry this process's pid, so parallel runs do not meet),
 * a bridge `rfb<pid>` at 10.211.<n>.1, and a veth pair per server. It is removed at exit even if
 * the caller forgets; a failure while building removes what was made.
 *
 * @example
 * ```ts
 * const network = createServerNetwork(3);
 * network.isolate(0);
 * network.heal(0);
 * network.remove();
 * ```
 */
export function createServerNetwork(count: number): ServerNetwork {
  const tag = `rf${process.pid}`;
  const bridge = `${tag}b`;
  const subnet = freeSubnet();
  const hosts: NetworkHost[] = [];
  const inside = (i: number) => `${tag}s${i}`;
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('exit', remove);
    for (const host of hosts) {
      // Deleting the namespace deletes the veth end inside it, and so its pair.
      if (existsSync(`/run/netns/${host.namespace}`)) ip('netns', 'del', host.namespace);
    }
    try {
      ip('link', 'del', bridge);
    } catch {
      // Not made.
    }
  };
  process.on('exit', remove);
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `10.211.${subnet}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (let i = 0; i < count; i++) {
      const namespace = `${tag}-n${i + 1}`;
      const address = `10.211.${subnet}.${11 + i}`;
      ip('netns', 'add', namespace);
      hosts.push({ namespace, address });
      ip('link', 'add', `${tag}h${i}`, 'type', 'veth', 'peer', 'name', inside(i));
      ip('link', 'set', inside(i), 'netns', namespace);
      ip('link', 'set', `${tag}h${i}`, 'master', bridge);
      ip('link', 'set', `${tag}h${i}`, 'up');
      ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', inside(i));
      ip('-n', namespace, 'link', 'set', inside(i), 'up');
      ip('-n', namespace, 'link', 'set', 'lo', 'up');
    }
  } catch (error) {
    remove();
    throw error;
  }
  const blackholes: { namespace: string; address: string }[] = [];
  const blackhole = (namespace: string, address: string) => {
    ip('-n', namespace, 'route', 'add', 'blackhole', `${address}/32`);
    blackholes.push({ namespace, address });
  };
  return {
    hosts,
    separate(i, j) {
      blackhole(hosts[i]!.namespace, hosts[j]!.address);
      blackhole(hosts[j]!.namespace, hosts[i]!.address);
    },
    shutOut: (i) => blackhole(hosts[i]!.namespace, `10.211.${subnet}.1`),
    mend() {
      for (const { namespace, address } of blackholes.splice(0)) ip('-n', namespace, 'route', 'del', 'blackhole', `${address}/32`);
    },
    isolate: (i) => void ip('-n', hosts[i]!.namespace, 'link', 'set', inside(i), 'down'),
    heal: (i) => void ip('-n', hosts[i]!.namespace, 'link', 'set', inside(i), 'up'),
    remove,
  };
}
