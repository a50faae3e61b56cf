/** Two runs compared iteration by iteration: the comparison lives with the log's steps, in machines/ (the HTTP API's diff route uses it too). */
export * from '../machines/runDiff.js';
