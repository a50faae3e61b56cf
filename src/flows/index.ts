/**
 * Flow graphs: node types, the strict edge rules, validation and loading.
 * `nodeTypes.ts` and `edgeRules.ts` are pure and can be imported on their own by the browser editor.
 */
export * from './nodeTypes.js';
export * from './edgeRules.js';
export * from './diagnostics.js';
export * from './agentConfig.js';
export * from './jsonSyntaxError.js';
export * from './formatDiagnostics.js';
export { validateFlow, TOOL_NAME_PATTERN } from './validateFlow.js';
export type { FlowValidation, ResolvedFlow, ResolvedTool } from './validateFlow.js';
export { loadFlowFile, parseFlowText, MAX_FLOW_FILE_BYTES } from './loadFlow.js';
export type { LoadedFlow } from './loadFlow.js';
