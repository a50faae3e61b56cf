import { ErrorCode } from './errors.js';

/**
 * What kind of failure an error code is, from the point of view of whoever asked: the one
 * classification from which the HTTP API's and Node-RED routes' statuses ({@link httpStatusOf})
 * and the CLI's exit codes (`exitCodeOfError` in `src/cli/exitCodes.ts`) are derived.
 *
 * - `invalid_input`: the request or command's own input is wrong (fix it and ask again);
 * - `invalid_data`: the request is fine, but what it names is not (a stored flow or memory past the
 *   limits, a flow's wiring, an agent definition);
 * - `corrupt`: a run's log or a conversation's memory is damaged: a file the command was given (the
 *   CLI's user can repair it, `redflow resume` a torn log), but a server's own store that failed;
 * - `usage`: the command line is wrong;
 * - `unauthorized`: a token is missing or wrong;
 * - `forbidden`: refused whatever the token (a `Host` that is not local);
 * - `not_found`: what the request names (a flow, a run, a log, a route) does not exist;
 * - `missing_file`: a file an input or a flow names does not exist;
 * - `conflict`: the request is well formed but the state of what it names does not take it now
 *   (a run that waits for nothing, an answer given already, a trace id taken, a concurrent write);
 * - `too_large`: past a size limit;
 * - `unavailable`: a service it needs cannot be reached or is shutting down (try again later);
 * - `internal`: none of the above, or a run outcome rather than a refusal: Redflow's failure.
 */
export type ErrorKind =
  | 'invalid_input'
  | 'invalid_data'
  | 'corrupt'
  | 'usage'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'missing_file'
  | 'conflict'
  | 'too_large'
  | 'unavailable'
  | 'internal';

/** The kind of every code: adding a code to {@link ErrorCode} without a kind here fails the typecheck. */
export const ERROR_KINDS: { readonly [C in ErrorCode]: ErrorKind } = {
  // Model answer validation and run outcomes: what a run ends with, not a refusal of a request.
  ANSWER_TOO_LARGE: 'internal',
  ANSWER_TOO_DEEP: 'internal',
  ANSWER_INVALID_TEXT: 'internal',
  INVALID_JSON: 'internal',
  ANSWER_DUPLICATE_KEY: 'internal',
  ANSWER_FORBIDDEN_KEY: 'internal',
  ANSWER_NOT_OBJECT: 'internal',
  ANSWER_MULTIPLE_TOOL_CALLS: 'internal',
  ACTION_MISSING: 'internal',
  ACTION_UNKNOWN: 'internal',
  ANSWER_SCHEMA_MISMATCH: 'internal',
  CONFIDENCE_MISSING: 'internal',
  CONFIDENCE_OUT_OF_RANGE: 'internal',
  TOOL_MISSING: 'internal',
  FINAL_MESSAGE_MISSING: 'internal',
  TOOL_NOT_ALLOWED: 'internal',
  TOOL_INPUT_INVALID: 'internal',
  THOUGHT_MISSING: 'internal',
  REFLECTION_MISSING: 'internal',
  DECISION_MISSING: 'internal',
  DECISION_MISMATCH: 'internal',
  ITERATION_OVERFLOW: 'internal',
  BUDGET_EXHAUSTED: 'internal',
  BUDGET_CONFIG_INVALID: 'invalid_input',
  RUN_TIMEOUT: 'internal',
  RUN_ABORTED: 'internal',
  RUN_INPUT_INVALID: 'invalid_input',
  RUN_INPUT_TOO_DEEP: 'invalid_input',
  RUN_INPUT_TOO_LARGE: 'invalid_input',
  RUN_TRACE_ID_TAKEN: 'conflict',
  RUN_STOPPED: 'internal',
  RUN_WAITING: 'internal',
  // The answer came after the wait's deadline: the run ends blocked instead.
  WAIT_EXPIRED: 'conflict',
  RUN_NOT_WAITING: 'conflict',
  WAIT_ALREADY_ANSWERED: 'conflict',
  WAIT_ANSWER_MISMATCH: 'conflict',
  HUMAN_ANSWER_MISSING: 'internal',
  OUTPUT_INVALID: 'internal',
  VERIFICATION_INVALID: 'internal',
  VERIFICATION_FAILED: 'internal',
  RUN_DELEGATED: 'internal',

  // Model actors: a run's failure (the outcome says so), not the request's.
  MODEL_UNAVAILABLE: 'internal',
  MODEL_TIMEOUT: 'internal',
  MODEL_RATE_LIMITED: 'internal',
  MODEL_SERVER_ERROR: 'internal',
  MODEL_REQUEST_REJECTED: 'internal',
  MODEL_PROTOCOL_ERROR: 'internal',
  MODEL_RESPONSE_TOO_LARGE: 'internal',
  MODEL_SCRIPT_EXHAUSTED: 'internal',
  MODEL_CONFIG_INVALID: 'invalid_input',
  MODEL_KEY_MISSING: 'invalid_input',
  MODEL_PROVIDER_UNKNOWN: 'internal',
  // A flow's answersFile (or --script) that is not there: the flow's fault, not a missing resource of the API.
  ANSWERS_FILE_NOT_FOUND: 'missing_file',

  // Tool actors.
  TOOL_FAILED: 'internal',
  TOOL_TIMEOUT: 'internal',
  TOOL_HOST_NOT_ALLOWED: 'internal',
  TOOL_RESPONSE_TOO_LARGE: 'internal',
  TOOL_HTTP_STATUS: 'internal',
  TOOL_MODULE_INVALID: 'invalid_input',
  TOOL_CONFIG_INVALID: 'invalid_input',
  TOOL_RESULT_STORE_FAILED: 'internal',
  SUBAGENT_FAILED: 'internal',
  SUBAGENT_TRACE_TAKEN: 'internal',
  A2A_AGENT_UNAVAILABLE: 'unavailable',
  A2A_TASK_FAILED: 'internal',
  TOOL_CALL_IN_PROGRESS: 'internal',
  TOOL_OUTPUT_TOO_DEEP: 'internal',
  TOOL_OUTPUT_INVALID: 'internal',
  TOOL_DENIED: 'internal',
  MCP_SERVER_UNAVAILABLE: 'unavailable',
  MCP_TOOL_NAME_INVALID: 'invalid_data',
  MCP_TOOL_SCHEMA_INVALID: 'invalid_data',
  MCP_TOOL_NOT_FOUND: 'invalid_data',
  MCP_COMMAND_NOT_ALLOWED: 'forbidden',

  // Memory actors. A conversation's memory that cannot be read (a damaged file) or is past the limits.
  MEMORY_FAILED: 'corrupt',
  MEMORY_KEY_INVALID: 'invalid_input',
  MEMORY_RECORD_TOO_DEEP: 'invalid_data',
  MEMORY_RECORD_TOO_LARGE: 'invalid_data',

  // Transport.
  TRANSPORT_NO_RESPONDER: 'unavailable',
  TRANSPORT_TIMEOUT: 'unavailable',
  TRANSPORT_CLOSED: 'unavailable',
  TRANSPORT_BAD_MESSAGE: 'internal',
  TRANSPORT_CONNECT_FAILED: 'unavailable',
  TRANSPORT_PERMISSION_DENIED: 'internal',
  SUBJECT_PREFIX_INVALID: 'internal',

  // Event log: a log that is not one (`run --log` on a damaged log; `redflow resume` repairs a torn one).
  LOG_RECORD_CORRUPT: 'corrupt',
  LOG_RECORD_TORN: 'corrupt',
  LOG_SEQUENCE_GAP: 'corrupt',
  LOG_CONCURRENT_WRITER: 'conflict',
  LOG_EMPTY: 'corrupt',
  LOG_NOT_FOUND: 'not_found',
  LOG_STORE_UNAVAILABLE: 'unavailable',
  JETSTREAM_NOT_ENABLED: 'unavailable',
  JETSTREAM_REPLICAS_UNAVAILABLE: 'unavailable',
  LOG_TRACE_MISMATCH: 'corrupt',
  LOG_PATH_INVALID: 'corrupt',
  LOG_CLOSED: 'internal',
  LOG_CURSOR_INVALID: 'internal',
  LOG_STREAM_OLD_LAYOUT: 'conflict',

  // Flow graphs. A flow that does not validate is usually thrown as one FlowInvalidError (the
  // request's fault: 400, exit 65); one of these codes on its own says the flow named is not valid.
  NO_AGENT_CORE: 'invalid_data',
  MULTIPLE_AGENT_CORES: 'invalid_data',
  CAPABILITY_NOT_CONNECTED: 'invalid_data',
  FLOW_NOT_FOUND: 'not_found',
  // The request is well formed and the flow valid: it conflicts with the flow the cluster runs.
  FLOW_MISMATCH: 'conflict',
  FLOW_INVALID_JSON: 'invalid_data',
  FLOW_SCHEMA_MISMATCH: 'invalid_data',
  UNKNOWN_NODE_TYPE: 'invalid_data',
  DUPLICATE_NODE_ID: 'invalid_data',
  DUPLICATE_EDGE_ID: 'invalid_data',
  EDGE_NODE_MISSING: 'invalid_data',
  EDGE_NOT_ALLOWED: 'invalid_data',
  EDGE_KIND_MISMATCH: 'invalid_data',
  START_NODE_MISSING: 'invalid_data',
  NODE_CONFIG_INVALID: 'invalid_data',
  NO_MODEL: 'invalid_data',
  MULTIPLE_MODELS: 'invalid_data',
  VERIFIER_MODEL_NOT_FOUND: 'invalid_data',
  MULTIPLE_MEMORIES: 'invalid_data',
  ALLOWED_TOOL_NOT_CONNECTED: 'invalid_data',
  DUPLICATE_TOOL_NAME: 'invalid_data',
  TOOL_WITHOUT_INPUT_SCHEMA: 'invalid_data',
  NO_TOOLS: 'invalid_data',
  APPROVAL_TOOL_NOT_ALLOWED: 'invalid_data',
  ENV_NOT_SET: 'invalid_data',
  TOOL_NOT_IN_ALLOWED_TOOLS: 'invalid_data',
  FLOW_TOO_LARGE: 'too_large',
  FLOW_FILE_OUTSIDE_ROOTS: 'invalid_input',
  FLOW_TOOL_NODE_RED_ONLY: 'invalid_data',
  AGENT_REF_NOT_FOUND: 'invalid_data',
  AGENT_REF_INVALID: 'invalid_data',
  AGENT_REF_CYCLE: 'invalid_data',
  AGENT_REF_TOO_DEEP: 'invalid_data',

  // Command line.
  CLI_USAGE: 'usage',
  INPUT_FILE_NOT_FOUND: 'missing_file',

  // Eval suites.
  EVAL_SUITE_NOT_FOUND: 'missing_file',
  EVAL_CASE_INVALID: 'invalid_data',
  EVAL_CASE_NO_PRICE: 'invalid_data',
  EVAL_CASE_LOG_INVALID: 'invalid_data',
  EVAL_CASE_EXISTS: 'conflict',
  EVAL_OUT_DIR_NOT_EMPTY: 'conflict',
  EVAL_JUDGE_ANSWER_INVALID: 'invalid_data',
  EVAL_BASELINE_INVALID: 'invalid_input',
  EVAL_SEAM_UNAVAILABLE: 'usage',
  DIFF_LOG_UNREADABLE: 'corrupt',
  FORK_POINT_OUT_OF_RANGE: 'invalid_input',
  FORK_RUN_STILL_RUNNING: 'conflict',
  FORK_PREFIX_INCOMPATIBLE: 'invalid_data',

  // HTTP API.
  HTTP_NOT_FOUND: 'not_found',
  HTTP_METHOD_NOT_ALLOWED: 'invalid_input',
  HTTP_UNAUTHORIZED: 'unauthorized',
  HTTP_BODY_TOO_LARGE: 'too_large',
  HTTP_BODY_NOT_JSON: 'invalid_input',
  HTTP_BODY_INVALID: 'invalid_input',
  HTTP_UNSUPPORTED_MEDIA_TYPE: 'invalid_input',
  FLOW_ID_INVALID: 'invalid_input',
  RUN_NOT_FOUND: 'not_found',
  RUN_ALREADY_FINISHED: 'conflict',
  RUN_INTERRUPTED: 'conflict',
  SERVE_TOKEN_REQUIRED: 'usage',
  HTTP_QUERY_INVALID: 'invalid_input',
  HTTP_HOST_NOT_ALLOWED: 'forbidden',
  EDITOR_NOT_BUILT: 'unavailable',
  SERVER_CLOSING: 'unavailable',
  HTTP_INTERNAL_ERROR: 'internal',

  // The step service.
  REACT_STEP_HISTORY_INVALID: 'invalid_input',
  // The history is well formed: it disagrees with what the session's log recorded.
  REACT_STEP_HISTORY_CONFLICT: 'conflict',
  REACT_STEP_MODEL_UNKNOWN: 'invalid_input',
  AGUI_INPUT_INVALID: 'invalid_input',
  // The input (with the system prompt) is longer than the model's window.
  CONTEXT_BUDGET_EXCEEDED: 'invalid_input',

  // Agent definitions.
  AGENT_DEFINITION_INVALID: 'invalid_data',
  AGENT_MARKDOWN_INVALID: 'invalid_data',
  AGENT_ALREADY_REGISTERED: 'conflict',
  TEMPLATE_VARIABLE_MISSING: 'invalid_input',
  AGENT_INPUT_INVALID: 'invalid_input',
  AGENT_OUTPUT_INVALID: 'internal',

  MCP_TOOL_UNKNOWN: 'not_found',
  MCP_ARGUMENTS_INVALID: 'invalid_input',
  INSPECT_UNAVAILABLE: 'unavailable',

  // Node-RED.
  NODE_RED_FLOWS_INVALID: 'invalid_data',
  // `redflow convert`: the flows given hold no tab by that name, none with Redflow nodes, or several.
  NODE_RED_TAB_NOT_FOUND: 'invalid_data',
  NODE_RED_ID_CONFLICT: 'conflict',
  NODE_RED_SECRET_IN_FLOW: 'invalid_data',
  NODE_RED_NODE_UNSUPPORTED: 'invalid_data',
  NODE_RED_UNREACHABLE: 'unavailable',
  NODE_RED_UNAUTHORIZED: 'unauthorized',
  NODE_RED_FLOWS_CHANGED: 'conflict',
  // The flow's agent is not deployed (or stopped): the same request succeeds once it is.
  NODE_RED_AGENT_NOT_RUNNING: 'conflict',

  // An optional package (pg, tsx) the flow needs is not installed on the server: the request is fine.
  DEPENDENCY_MISSING: 'unavailable',
};

/** The HTTP status of each kind. */
const HTTP_STATUS_OF_KIND: { readonly [K in ErrorKind]: number } = {
  invalid_input: 400,
  invalid_data: 422,
  corrupt: 500,
  usage: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  missing_file: 400,
  conflict: 409,
  too_large: 413,
  unavailable: 503,
  internal: 500,
};

/** Codes whose HTTP status is not their kind's, and why. */
const HTTP_STATUS_OVERRIDES: Partial<Readonly<Record<ErrorCode, number>>> = {
  // HTTP has a status of its own for these two ways of asking wrong.
  [ErrorCode.HTTP_METHOD_NOT_ALLOWED]: 405,
  [ErrorCode.HTTP_UNSUPPORTED_MEDIA_TYPE]: 415,
  // The client's request is fine: the server's own access to Node-RED failed (or what Node-RED
  // holds is not valid), so the server answers as a gateway. The CLI still reads the kind: a
  // wrong --node-red-token is the command line's to fix.
  [ErrorCode.NODE_RED_UNAUTHORIZED]: 502,
  [ErrorCode.NODE_RED_UNREACHABLE]: 502,
  [ErrorCode.NODE_RED_FLOWS_INVALID]: 502,
};

/** The kind of failure an error code is. */
export function errorKindOf(code: ErrorCode): ErrorKind {
  return ERROR_KINDS[code] ?? 'internal';
}

/**
 * The HTTP status an error code is answered with, by `redflow serve` and by the Redflow nodes'
 * admin routes in Node-RED alike (500 for a code that is not a known one).
 *
 * @example
 * ```ts
 * httpStatusOf(ErrorCode.RUN_NOT_FOUND); // 404
 * ```
 */
export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS_OVERRIDES[code] ?? HTTP_STATUS_OF_KIND[errorKindOf(code)];
}
