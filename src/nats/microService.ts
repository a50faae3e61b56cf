import type { Endpoint, Service, ServiceMsg, Svcm } from '@nats-io/services';
import type { Msg, NatsConnection, Payload, PublishOptions } from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { NatsHeader, type NatsServeListener } from './natsTransport.js';
import { watchRefusedSubscriptions } from './refusedSubscriptions.js';

/** Options of {@link startMicroService}. */
export interface MicroServiceOptions {
  /** The service's name, as `nats micro ls` lists it: letters, digits, `-` and `_`. */
  readonly name: string;
  /** Its version (semver): Redflow's. */
  readonly version: string;
  readonly description?: string;
  /** Said in `$SRV.INFO` and `$SRV.PING` answers: the prefix, the flow, the host. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** The subject prefix its endpoints are under: an endpoint is named by its subject without it. */
  readonly prefix?: string;
  /** Hears that the service stopped on its own (a subscription the server ended): its endpoints no longer take requests. */
  readonly log?: (line: string) => void;
}

/**
 * What `$SRV.STATS` says of an endpoint besides the service framework's own counts, as its
 * `data`: the framework counts a request when it is handed over and times only that, while a
 * model or tool call is answered later; these follow each call to its reply.
 */
export interface EndpointCalls {
  /** Requests taken and not answered yet: the worker's queue depth on this endpoint. */
  readonly in_flight: number;
  /** Requests answered. */
  readonly answered: number;
  /** Of them, answered with an error (a `Redflow-Error` reply). */
  readonly errors: number;
  /** The error code of the last of those. */
  readonly last_error?: string;
  /** From a request's arrival to its reply, in milliseconds, on average over those answered. */
  readonly average_ms: number;
}

/** A running NATS micro service whose endpoints a NATS transport's `serve` adds. */
export interface MicroService extends NatsServeListener {
  /** Its name, and its id (one per instance: what `$SRV.*.<name>.<id>` names). */
  readonly name: string;
  readonly id: string;
  /** What each endpoint has done so far, by subject. */
  calls(subject: string): EndpointCalls | undefined;
  /** Stops the service: every endpoint stops taking requests, those taken are still answered. */
  stop(): Promise<void>;
}

/**
 * Starts a NATS micro service (the `@nats-io/services` framework) that a NATS transport serves
 * through (`createNatsTransport(nc, { listener })`): each `serve` becomes an endpoint on the same
 * subject and in the same queue group as a plain `serve`, so requesters see no change and
 * workers with and without it share the load. The service answers discovery and monitoring on
 * `$SRV.PING`, `$SRV.INFO` and `$SRV.STATS` (`nats micro ls`, `nats micro stats <name>`): its
 * endpoints and their subjects, requests and errors, and ({@link EndpointCalls}) the calls under
 * way. An error reply also carries the framework's `Nats-Service-Error` headers: the code, and
 * 400 for a request at fault, 500 otherwise.
 *
 * The endpoints of a service live and end together: the framework cannot remove one, so the
 * first `drain` of any of them stops the service (an actor worker stops them all at once).
 *
 * @throws RedflowError `TRANSPORT_PERMISSION_DENIED` when the connection may not subscribe to
 *   `$SRV.>` (the server refuses the service's discovery subjects): grant it, or serve plainly.
 * @example
 * ```ts
 * const service = await startMicroService(nc, { name: 'redflow-tool', version: '0.1.0', prefix: 'redflow' });
 * const transport = createNatsTransport(nc, { listener: service });
 * serveTool(transport, Subject.tool('redflow', 'add'), addTool);
 * ```
 */
export async function startMicroService(nc: NatsConnection, options: MicroServiceOptions): Promise<MicroService> {
  const calls = new Map<string, { in_flight: number; answered: number; errors: number; last_error?: string; totalMs: number }>();
  // The server refuses a subscription it does not allow with an error on the connection, which
  // the framework's discovery subscriptions (in no queue group) do not match: watched from before
  // the service subscribes until the server has answered a flush.
  const watch = watchRefusedSubscriptions(nc, (subject) => subject.startsWith('$SRV.'));
  // Loaded here, not with `redflow/nats`: only a worker that serves needs the framework.
  const framework = await import('@nats-io/services');
  const errorHeaders = { description: framework.ServiceErrorHeader, code: framework.ServiceErrorCodeHeader };
  let service: Service;
  try {
    service = await new framework.Svcm(asServicesConnection(nc)).add({
      name: options.name,
      version: options.version,
      ...(options.description !== undefined && { description: options.description }),
      ...(options.metadata !== undefined && { metadata: { ...options.metadata } }),
      statsHandler: (endpoint: Endpoint) => Promise.resolve(callsOf(calls.get(endpoint.subject))),
    });
  } catch (error) {
    watch.stop();
    throw new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `cannot start the NATS micro service ${options.name}: ${error instanceof Error ? error.message : String(error)}`, {
        hint: 'a service name is letters, digits, - and _; its version is semver',
      }),
      { cause: error },
    );
  }
  let refused: readonly string[];
  try {
    refused = await watch.settle();
  } finally {
    watch.stop();
  }
  if (refused.length > 0 || service.isStopped) {
    await service.stop();
    throw new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_PERMISSION_DENIED, `NATS does not let this connection serve the micro service ${options.name}: it refused the subscription to ${refused.join(', ') || 'its discovery subjects'}`, {
        hint: 'grant the user subscribe permission on $SRV.> (see deploy/nats/redflow.conf)',
      }),
    );
  }
  const names = new Set<string>();
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= service.stop().then(() => undefined));
  void service.stopped.then((why) => {
    if (stopping === undefined) options.log?.(`the NATS micro service ${options.name} stopped${why instanceof Error ? `: ${why.message}` : ''}; its endpoints take no more requests`);
  });

  return {
    name: options.name,
    id: service.info().id,
    calls: (subject) => callsOf(calls.get(subject)) ?? undefined,
    stop,
    listen(subject, queue, callback) {
      const counts = { in_flight: 0, answered: 0, errors: 0, totalMs: 0 } as { in_flight: number; answered: number; errors: number; last_error?: string; totalMs: number };
      calls.set(subject, counts);
      service.addEndpoint(endpointName(subject, options.prefix, names), {
        subject,
        queue,
        handler: (error, msg) => {
          const request = asMsg(msg);
          if (error) return callback(error, request);
          // A request without a reply subject gets none: the transport drops it, and it is no call.
          if (!request.reply) return callback(null, request);
          const arrived = performance.now();
          counts.in_flight += 1;
          callback(
            null,
            observedMsg(request, errorHeaders, (failed) => {
              counts.in_flight -= 1;
              counts.answered += 1;
              counts.totalMs += performance.now() - arrived;
              if (failed !== undefined) {
                counts.errors += 1;
                counts.last_error = failed;
              }
            }),
          );
        },
      });
      return { drain: stop };
    },
  };
}

/**
 * The published `@nats-io/services` (3.0.0-25) is built on a `@nats-io/nats-core` prerelease of
 * its own, whose types differ from the client's only in how `MsgHdrs.get`'s `Match` is declared
 * (an enum there, a union here). The objects are the same at run time, so the connection and the
 * messages cross between the two declarations here, and nowhere else.
 */
type ServicesConnection = ConstructorParameters<typeof Svcm>[0];
const asServicesConnection = (nc: NatsConnection): ServicesConnection => nc as unknown as ServicesConnection;
const asMsg = (msg: ServiceMsg): Msg => msg as unknown as Msg;

/** The stats `data` of an endpoint's counts. */
function callsOf(counts: { in_flight: number; answered: number; errors: number; last_error?: string; totalMs: number } | undefined): EndpointCalls | null {
  if (counts === undefined) return null;
  const { in_flight, answered, errors, last_error, totalMs } = counts;
  return { in_flight, answered, errors, ...(last_error !== undefined && { last_error }), average_ms: answered === 0 ? 0 : Math.round((totalMs / answered) * 100) / 100 };
}

/**
 * An endpoint's name: its subject without the service's prefix, `.` as `-` and anything else the
 * framework refuses (it takes letters, digits, `-` and `_`) as `_`, made unique within the service.
 */
export function endpointName(subject: string, prefix: string | undefined, taken: Set<string>): string {
  const relative = prefix !== undefined && subject.startsWith(`${prefix}.`) ? subject.slice(prefix.length + 1) : subject;
  const base = relative.replaceAll('.', '-').replace(/[^-\w]/g, '_') || 'endpoint';
  let name = base;
  for (let n = 2; taken.has(name); n += 1) name = `${base}-${n}`;
  taken.add(name);
  return name;
}

/** Codes of a request at fault, answered 400 in `Nats-Service-Error-Code`; any other error is 500. */
const REQUEST_AT_FAULT: ReadonlySet<string> = new Set([ErrorCode.TRANSPORT_BAD_MESSAGE, ErrorCode.TOOL_INPUT_INVALID]);

/**
 * `msg`, telling `answered` of its one reply (with the reply's error code when it failed), and
 * marking an error reply with the framework's headers too. Written as a wrapper because the
 * framework times and counts only the synchronous part of a handler.
 */
function observedMsg(msg: Msg, errorHeaders: { readonly description: string; readonly code: string }, answered: (failed: string | undefined) => void): Msg {
  let replied = false;
  return {
    get subject() {
      return msg.subject;
    },
    get sid() {
      return msg.sid;
    },
    get reply() {
      return msg.reply;
    },
    get data() {
      return msg.data;
    },
    get headers() {
      return msg.headers;
    },
    respond(payload?: Payload, opts?: PublishOptions): boolean {
      const failed = opts?.headers?.get(NatsHeader.Error) || undefined;
      if (failed !== undefined && opts?.headers !== undefined) {
        opts.headers.set(errorHeaders.description, failed);
        opts.headers.set(errorHeaders.code, REQUEST_AT_FAULT.has(failed) ? '400' : '500');
      }
      if (!replied) {
        replied = true;
        answered(failed);
      }
      return msg.respond(payload, opts);
    },
    json: (reviver) => msg.json(reviver),
    string: () => msg.string(),
  };
}
