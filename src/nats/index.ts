/**
 * `redflow/nats`: everything of Redflow that speaks NATS, in one place: the connection helper, the
 * transport and its request multiplexer, the JetStream event log, the KV stores (memory, tool
 * results, run leases), run aborts, the core and actor workers, remote runs, and the run backend
 * of `redflow serve --nats`. Kept out of the main entry point so that embedded users never load the
 * NATS client.
 *
 * @example
 * ```ts
 * import { connectNats, createNatsTransport } from 'redflow/nats';
 *
 * const nc = await connectNats({ servers: '127.0.0.1:4222' });
 * const transport = createNatsTransport(nc);
 * ```
 *
 * @module
 */
export type { NatsConnection } from '@nats-io/transport-node';
export { connectNats, natsConnectionOptions, type ConnectNatsOptions } from './connect.js';
export { jsonCodec, type PayloadCodec } from './codec.js';
export {
  createNatsTransport,
  DEFAULT_MAX_PAYLOAD_BYTES,
  NatsHeader,
  type NatsListening,
  type NatsServeListener,
  type NatsTransportLog,
  type NatsTransportOptions,
} from './natsTransport.js';
export { startMicroService, type EndpointCalls, type MicroService, type MicroServiceOptions } from './microService.js';
export { createRequestMux, type MuxOutcome, type RequestMux } from './requestMux.js';
export { requireJetStream } from './jetStreamNotEnabled.js';
export {
  openJetStreamEventStore,
  type JetStreamEventStore,
  type JetStreamEventStoreOptions,
} from './jetstream/jetstreamEventStore.js';
export { createNatsKvMemoryStore, type NatsKvMemoryStore, type NatsKvMemoryStoreOptions } from './kv/natsKvMemoryStore.js';
export { createNatsKvToolResultStore, type NatsKvToolResultStoreOptions } from './kv/natsKvToolResultStore.js';
export { serveIdempotentTool, type ServeIdempotentToolOptions } from '../runtime/serveIdempotentTool.js';
export { startCoreWorker, type CoreWorker, type CoreWorkerOptions, type RunStartRequest, type RunStartReply } from './cluster/coreWorker.js';
export { startActorWorker, WorkerRole, type ActorWorker, type ActorWorkerOptions } from './cluster/actorWorker.js';
export { startRemoteRun, type RemoteRun, type RemoteRunOptions } from './cluster/remoteRun.js';
export { forkOnCluster, type ClusterFork, type ClusterForkOptions } from './cluster/clusterFork.js';
export { createSharedRunFollow, type SharedRunFollow, type SharedRunFollowOptions } from './jetstream/sharedRunFollow.js';
export {
  requestRunAbort,
  serveRunAborts,
  type AbortRequestOutcome,
  type AbortableRun,
  type RunAbortReply,
  type RunAbortRequest,
} from './cluster/runAborts.js';
export { idempotentToolServer } from './cluster/idempotentTools.js';
export { openRunLeases, type RunLeases, type RunRecord } from './cluster/runLeases.js';
export { createNatsRunBackend, type NatsRunBackendOptions } from './serve/natsRunBackend.js';
