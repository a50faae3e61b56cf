/**
 * Flow graphs: node types, the strict edge rules, validation and loading.
 * `nodeTypes.ts` and `edgeRules.ts` are pure and can be imported on their own by the browser editor.
 */
export * from './nodeTypes.js';
export * from './edgeRules.js';
export * from './diagnostics.js';
export * from './agentConfig.js';
export * from '../files/jsonSyntaxError.js';
export * from './formatDiagnostics.js';
/** Flow validation, and the pattern tool names must match. */
export { validateFlow, TOOL_NAME_PATTERN } from './validateFlow.js';
/** What `validateFlow` returns, and the resolved flow and tools of a valid one. */
export type { FlowValidation, ResolvedFlow, ResolvedTool } from './validateFlow.js';
/** Reading a flow from a file or from text, validated. */
export { loadFlowFile, parseFlowText, MAX_FLOW_FILE_BYTES } from './loadFlow.js';
/** What `loadFlowFile` returns, and its options. */
export type { LoadedFlow, LoadFlowOptions } from './loadFlow.js';
