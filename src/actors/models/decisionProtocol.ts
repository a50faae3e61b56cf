/**
 * What a model needs to hold its answers to a decision contract (constrained output, native
 * tools), in one module a provider loads on its first request that carries a contract, so
 * `import 'redflow'` and `redflow --version` never load it.
 */
export { structuredAnswerText } from './decisionAnswer.js';
export { DECISION_SCHEMA_NAME, decisionSchemaFor } from './decisionSchema.js';
export { nativeAnswerText, nativeFunctionsFor } from './nativeTools.js';

