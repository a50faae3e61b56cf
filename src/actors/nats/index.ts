/**
 * Redflow over NATS: the connection helper and the distributed transport. Kept out of the main
 * entry point so that embedded users never load the NATS client.
 *
 * @example
 * ```ts
 * import { connectNats, createNatsTransport } from './actors/nats/index.js';
 *
 * const nc = await connectNats({ servers: '127.0.0.1:4222' });
 * const transport = createNatsTransport(nc);
 * ```
 *
 * @module
 */
export { connectNats, natsConnectionOptions, type ConnectNatsOptions } from './connect.js';
export { jsonCodec, type PayloadCodec } from './codec.js';
export {
  createNatsTransport,
  DEFAULT_MAX_PAYLOAD_BYTES,
  NatsHeader,
  type NatsTransportLog,
  type NatsTransportOptions,
} from './natsTransport.js';
export {
  openJetStreamEventStore,
  type JetStreamEventStore,
  type JetStreamEventStoreOptions,
} from '../../events/jetstream/jetstreamEventStore.js';
export { createNatsKvMemoryStore, type NatsKvMemoryStore, type NatsKvMemoryStoreOptions } from '../memory/natsKvMemoryStore.js';
export { createNatsKvToolResultStore, type NatsKvToolResultStoreOptions } from '../toolResults/natsKvToolResultStore.js';
export { serveIdempotentTool, type ServeIdempotentToolOptions } from '../toolResults/serveIdempotentTool.js';
export { startCoreWorker, type CoreWorker, type CoreWorkerOptions, type RunStartRequest, type RunStartReply } from '../../distributed/coreWorker.js';
export { startActorWorker, WorkerRole, type ActorWorker, type ActorWorkerOptions } from '../../distributed/actorWorker.js';
export { startRemoteRun, type RemoteRun, type RemoteRunOptions } from '../../distributed/remoteRun.js';
export {
  requestRunAbort,
  serveRunAborts,
  type AbortRequestOutcome,
  type AbortableRun,
  type RunAbortReply,
  type RunAbortRequest,
} from '../../distributed/runAborts.js';
export { idempotentToolServer } from '../../distributed/idempotentTools.js';
