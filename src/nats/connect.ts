import { readFile } from 'node:fs/promises';
import {
  AuthorizationError,
  UserAuthenticationExpiredError,
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { registerSecret } from '../secrets/secrets.js';
import { dropStaleSockets, leastRecentlyDialled } from './failover.js';

/** Options of {@link connectNats}. At most one way to authenticate may be given. */
export interface ConnectNatsOptions {
  /** `host:port` or `nats://host:port`, one or several (a cluster). */
  readonly servers: string | readonly string[];
  /** User and password (`authorization { user, password }` in the server config). */
  readonly user?: string;
  /** The password of `user`. */
  readonly pass?: string;
  /** A token (`authorization { token }`). */
  readonly token?: string;
  /** An nkey seed (`SU…`) whose public key the server knows. */
  readonly nkeySeed?: string;
  /** A `.creds` file (user JWT and nkey seed, as `nsc` writes them). */
  readonly credsFile?: string;
  /**
   * Prefix of this connection's reply subjects (default `_INBOX`). Give each role its own (such as
   * `_INBOX_tool`) so the server can confine a user to its own replies (deploy/nats/redflow.conf).
   */
  readonly inboxPrefix?: string;
  /** Connection name, shown by `nats server report connections`. Default `redflow`. */
  readonly name?: string;
  /** How long to wait for the server, in ms. Default 5000. */
  readonly timeoutMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
/**
 * A ping to the server every 2 s, and the connection is given up as dead after 3 unanswered (the
 * client then reconnects to another server of the list): a server cut off by a network partition
 * answers nothing but its TCP connection stays open, so without pings the client would wait on it
 * for nats.js's defaults (a ping every 2 minutes, 2 unanswered: up to 6 minutes). A PING costs the
 * server a few bytes.
 */
const PING_INTERVAL_MS = 2000;
const MAX_PINGS_OUT = 3;

/**
 * The nats.js options for `options`: servers, name, timeout and the official authenticator for
 * the credentials given (reading the `.creds` file). Secrets are only handed to the authenticator.
 *
 * @throws RedflowError `TRANSPORT_CONNECT_FAILED` when several ways to authenticate are given, or
 *   the creds file cannot be read.
 *
 * @example
 * ```ts
 * const nc = await connect(await natsConnectionOptions({ servers: 'nats://a:4222', token: 't0ken' }));
 * ```
 */
export async function natsConnectionOptions(options: ConnectNatsOptions): Promise<NodeConnectionOptions> {
  const servers = typeof options.servers === 'string' ? options.servers : [...options.servers];
  // Known to the process from now on, so no log line, event or answer can show them.
  for (const secret of [options.pass, options.token, options.nkeySeed]) registerSecret(secret);
  const ways = [
    options.user !== undefined || options.pass !== undefined ? 'user/pass' : undefined,
    options.token !== undefined ? 'token' : undefined,
    options.nkeySeed !== undefined ? 'nkeySeed' : undefined,
    options.credsFile !== undefined ? 'credsFile' : undefined,
  ].filter((way): way is string => way !== undefined);
  if (ways.length > 1) {
    throw connectFailure(`choose one way to authenticate to NATS, got ${ways.join(', ')}`, 'give user/pass, token, nkeySeed or credsFile, not several');
  }
  let authenticator: Authenticator | undefined;
  if (options.user !== undefined || options.pass !== undefined) {
    if (options.user === undefined) throw connectFailure('a NATS password was given without a user', 'set user as well as pass');
    authenticator = usernamePasswordAuthenticator(options.user, options.pass);
  } else if (options.token !== undefined) {
    authenticator = tokenAuthenticator(options.token);
  } else if (options.nkeySeed !== undefined) {
    authenticator = nkeyAuthenticator(new TextEncoder().encode(options.nkeySeed.trim()));
  } else if (options.credsFile !== undefined) {
    let creds: Uint8Array;
    try {
      creds = await readFile(options.credsFile);
    } catch (error) {
      throw connectFailure(
        `cannot read the NATS creds file ${options.credsFile}: ${(error as Error).message}`,
        'check the path and its permissions',
        error,
      );
    }
    authenticator = credsAuthenticator(creds);
  }
  return {
    servers,
    name: options.name ?? 'redflow',
    timeout: options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // Without this, the client builds an Error (stack trace and all) for every request and
    // publish ack, just in case it times out: a fifth of a busy worker's time.
    noAsyncTraces: true,
    ...(options.inboxPrefix !== undefined && { inboxPrefix: options.inboxPrefix }),
    // Keep trying through a server restart: runs wait rather than fail.
    maxReconnectAttempts: -1,
    // Within half a second of the server's return (nats.js waits 2 s between tries by default): the
    // runs in flight wait for the reconnect, and a try costs the server one refused connection.
    reconnectTimeWait: 500,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    reconnectToServer: leastRecentlyDialled,
    ...(authenticator !== undefined && { authenticator }),
  };
}

/**
 * Opens a NATS connection with Redflow's defaults and a clear error when it cannot: the
 * connection the NATS transport, the JetStream event store and the KV memory store are given.
 * The caller owns it and closes it (`await nc.drain()`).
 *
 * @throws RedflowError `TRANSPORT_CONNECT_FAILED` when no server can be reached (with a hint to
 *   start one), when the credentials are refused, or when the options are contradictory.
 *
 * @example
 * ```ts
 * const nc = await connectNats({ servers: '127.0.0.1:4222', credsFile: 'redflow.creds' });
 * const transport = createNatsTransport(nc);
 * // …
 * await transport.close();
 * await nc.drain();
 * ```
 */
export async function connectNats(options: ConnectNatsOptions): Promise<NatsConnection> {
  const natsOptions = await natsConnectionOptions(options);
  const where = [natsOptions.servers ?? []].flat().join(', ');
  try {
    const nc = await connect(natsOptions);
    // The status iterator ends when the connection closes.
    dropStaleSockets(nc);
    return nc;
  } catch (error) {
    if (error instanceof AuthorizationError || error instanceof UserAuthenticationExpiredError) {
      throw connectFailure(
        `NATS at ${where} refused the credentials: ${error.message}`,
        'check the user/pass, token, nkey seed or creds file against the server configuration',
        error,
      );
    }
    throw connectFailure(
      `cannot connect to NATS at ${where}: ${(error as Error).message}`,
      `is nats-server running at ${where}? Start one with \`nats-server -js\``,
      error,
    );
  }
}

function connectFailure(message: string, hint: string, cause?: unknown): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.TRANSPORT_CONNECT_FAILED, message, { hint }), { cause });
}
