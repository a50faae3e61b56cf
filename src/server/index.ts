/**
 * `redflow/server`: the HTTP API and the editor (`redflow serve`) as a library, with the run
 * backends it drives. Kept out of the main entry point, which loads no HTTP server.
 *
 * @example
 * ```ts
 * import { createRedflowServer } from 'redflow/server';
 *
 * const server = await createRedflowServer({ flowsDir: 'flows', port: 4800 });
 * console.log(`editor at ${server.url}`);
 * ```
 *
 * The NATS backend (`redflow serve --nats`) is `createNatsRunBackend` in `redflow/nats`. On a
 * Node-RED's flows (`redflow serve --node-red`): `createRedflowServer({ flows: nodeRedFlowStore(admin),
 * backend: createNodeRedRunBackend({ admin }) })`.
 *
 * @module
 */
export { createRedflowServer, DEFAULT_PORT, DEFAULT_HOST, DEFAULT_FLOWS_DIR } from './server.js';
export type { RedflowServer, RedflowServerOptions } from './server.js';
export { createEmbeddedRunBackend } from './embeddedRunBackend.js';
export type { EmbeddedRunBackendOptions } from './embeddedRunBackend.js';
export type { RunBackend, BackendStartRequest, AbortAnswer, InspectorFactory } from './runBackend.js';
export type { FlowStore, FileFlowStore, RunnableFlow, StoredFlow } from './flowStore.js';
export { nodeRedAdmin, NODE_RED_TOKEN_ENV } from './nodeRed/nodeRedAdmin.js';
export type { NodeRedAdmin, NodeRedAdminOptions } from './nodeRed/nodeRedAdmin.js';
export { nodeRedFlowStore } from './nodeRed/nodeRedFlowStore.js';
export { createNodeRedRunBackend } from './nodeRed/nodeRedRunBackend.js';
export type { NodeRedRunBackendOptions } from './nodeRed/nodeRedRunBackend.js';
export { ApiRoute, StreamEvent } from './apiTypes.js';
export type * from './apiTypes.js';
