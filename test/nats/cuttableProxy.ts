import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay in front of a nats-server that a test can cut: every connection through it drops at
 * once, and new ones are refused, until it is opened again. Clients connected through it see the
 * server go away while the others do not (a network partition of one process).
 */
export interface CuttableProxy {
  /** `127.0.0.1:<port>`: what the clients behind the cut connect to. */
  readonly url: string;
  /** Drops every connection through the proxy and refuses new ones. */
  cut(): void;
  /**
   * Like `cut`, but the server's side of each connection stays open and what the server sends
   * on it is thrown away: a half-open partition, where the server goes on delivering to a
   * client that is gone until it notices.
   */
  cutClientSide(): void;
  /** Lets connections through again. */
  open(): void;
  close(): Promise<void>;
}

/** Starts a {@link CuttableProxy} to `target` (`host:port`), open. */
export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const [host = '127.0.0.1', port = '4222'] = target.split(':');
  const sockets = new Set<Socket>();
  const upstreams = new Map<Socket, Socket>();
  let isCut = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), host);
    track(upstream);
    upstreams.set(client, upstream);
    client.once('close', () => upstreams.delete(client));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const listening = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `127.0.0.1:${listening}`,
    cut() {
      isCut = true;
      for (const socket of sockets) socket.destroy();
    },
    cutClientSide() {
      isCut = true;
      for (const [client, upstream] of upstreams) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.removeAllListeners('close').removeAllListeners('error');
        upstream.removeAllListeners('close').removeAllListeners('error');
        client.on('error', () => undefined);
        upstreams.delete(client);
        upstream.on('error', () => undefined);
        // Read and dropped, so the server's writes succeed.
        upstream.on('data', () => undefined);
        client.destroy();
      }
    },
    open() {
      isCut = false;
    },
    close() {
      isCut = true;
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
