/**
 * Every error Redflow reports carries one of these stable codes. They are part of the public
 * contract: the event log, the CLI's `--json` output and (later) the HTTP API all use them, so a
 * code is never renamed or reused for another meaning.
 *
 * @example
 * ```ts
 * if (outcome.code === ErrorCode.TOOL_NOT_ALLOWED) { ... }
 * ```
 */
export const ErrorCode = {
  // Model answer validation, in the order the checks run.
  ANSWER_TOO_LARGE: 'ANSWER_TOO_LARGE',
  ANSWER_TOO_DEEP: 'ANSWER_TOO_DEEP',
  ANSWER_INVALID_TEXT: 'ANSWER_INVALID_TEXT',
  INVALID_JSON: 'INVALID_JSON',
  ANSWER_DUPLICATE_KEY: 'ANSWER_DUPLICATE_KEY',
  ANSWER_FORBIDDEN_KEY: 'ANSWER_FORBIDDEN_KEY',
  ANSWER_NOT_OBJECT: 'ANSWER_NOT_OBJECT',
  /** A model called more than one tool in one answer (native tool calling): a ReAct step takes one action. */
  ANSWER_MULTIPLE_TOOL_CALLS: 'ANSWER_MULTIPLE_TOOL_CALLS',
  ACTION_MISSING: 'ACTION_MISSING',
  ACTION_UNKNOWN: 'ACTION_UNKNOWN',
  ANSWER_SCHEMA_MISMATCH: 'ANSWER_SCHEMA_MISMATCH',
  CONFIDENCE_MISSING: 'CONFIDENCE_MISSING',
  CONFIDENCE_OUT_OF_RANGE: 'CONFIDENCE_OUT_OF_RANGE',
  TOOL_MISSING: 'TOOL_MISSING',
  /** A final answer has no `message`, or a blank one: the run would end `done` with an empty answer. */
  FINAL_MESSAGE_MISSING: 'FINAL_MESSAGE_MISSING',
  TOOL_NOT_ALLOWED: 'TOOL_NOT_ALLOWED',
  TOOL_INPUT_INVALID: 'TOOL_INPUT_INVALID',
  /** The agent's reasoning is "explicit" and the answer gives no `thought`. */
  THOUGHT_MISSING: 'THOUGHT_MISSING',
  /** The agent's reasoning is "explicit" and an answer after an observation gives no `reflection`. */
  REFLECTION_MISSING: 'REFLECTION_MISSING',
  /** The agent's reasoning is "explicit" and an answer after an observation gives no `decision`. */
  DECISION_MISSING: 'DECISION_MISSING',
  /** The answer's `decision` disagrees with its action (e.g. `done` with a tool call). */
  DECISION_MISMATCH: 'DECISION_MISMATCH',

  // Run-level outcomes that are not answer validation.
  ITERATION_OVERFLOW: 'ITERATION_OVERFLOW',
  /** The run spent its budget (agent `budget.maxTokens` or `budget.maxCost`), or the next call's input alone would overspend it. */
  BUDGET_EXHAUSTED: 'BUDGET_EXHAUSTED',
  /** An agent's `budget` is not one: a limit that is not a positive number, a price that is not one, or a `maxCost` for a model with no price. */
  BUDGET_CONFIG_INVALID: 'BUDGET_CONFIG_INVALID',
  RUN_TIMEOUT: 'RUN_TIMEOUT',
  RUN_ABORTED: 'RUN_ABORTED',
  RUN_INPUT_INVALID: 'RUN_INPUT_INVALID',
  /** A run's input nests deeper than model answers may (64 levels): refused before anything is recorded. */
  RUN_INPUT_TOO_DEEP: 'RUN_INPUT_TOO_DEEP',
  /** A run's input is longer as JSON than model answers may be (1,000,000 characters): refused before anything is recorded. */
  RUN_INPUT_TOO_LARGE: 'RUN_INPUT_TOO_LARGE',
  /** A run start names a trace id that is taken (its log or its run record exists): refused before anything is recorded. */
  RUN_TRACE_ID_TAKEN: 'RUN_TRACE_ID_TAKEN',
  RUN_STOPPED: 'RUN_STOPPED',
  /**
   * The run waits for an answer from outside (an approval, a client tool's result) and holds no
   * process: it is parked in its log until the answer comes (`redflow approve|deny|tool-result`).
   */
  RUN_WAITING: 'RUN_WAITING',
  /** A run's wait for an approval or a client tool's result passed its deadline (`waitTimeoutMs`). */
  WAIT_EXPIRED: 'WAIT_EXPIRED',
  /** An answer (approval, tool result) for a run that waits for none of that kind now: running, ended, or waiting for the other kind. */
  RUN_NOT_WAITING: 'RUN_NOT_WAITING',
  /** An answer for a wait that has been answered already: a wait takes one answer. */
  WAIT_ALREADY_ANSWERED: 'WAIT_ALREADY_ANSWERED',
  /** An answer naming another call (idempotency key, iteration) than the one the run waits on. */
  WAIT_ANSWER_MISMATCH: 'WAIT_ANSWER_MISMATCH',
  /** The model asked a person (escalate, request_info) and nobody answered in time, or the host cannot wait for an answer. */
  HUMAN_ANSWER_MISSING: 'HUMAN_ANSWER_MISSING',
  /** A final answer's output does not match the agent's outputSchema (the run still ends done, with validated: false). */
  OUTPUT_INVALID: 'OUTPUT_INVALID',
  /** The verifier's answer is not the verification shape (four checks, each passed or failed with its basis): the verification fails. */
  VERIFICATION_INVALID: 'VERIFICATION_INVALID',
  /** A final answer failed its verification (agent `verification`): a check failed. */
  VERIFICATION_FAILED: 'VERIFICATION_FAILED',
  /** The run ended by handing its task to another agent (the model's delegate action). */
  RUN_DELEGATED: 'RUN_DELEGATED',

  // Model actors.
  MODEL_UNAVAILABLE: 'MODEL_UNAVAILABLE',
  MODEL_TIMEOUT: 'MODEL_TIMEOUT',
  MODEL_RATE_LIMITED: 'MODEL_RATE_LIMITED',
  MODEL_SERVER_ERROR: 'MODEL_SERVER_ERROR',
  MODEL_REQUEST_REJECTED: 'MODEL_REQUEST_REJECTED',
  MODEL_PROTOCOL_ERROR: 'MODEL_PROTOCOL_ERROR',
  MODEL_RESPONSE_TOO_LARGE: 'MODEL_RESPONSE_TOO_LARGE',
  MODEL_SCRIPT_EXHAUSTED: 'MODEL_SCRIPT_EXHAUSTED',
  MODEL_CONFIG_INVALID: 'MODEL_CONFIG_INVALID',
  /** The model's server needs an API key (OpenAI's does) and its environment variable is not set: refused before any request. */
  MODEL_KEY_MISSING: 'MODEL_KEY_MISSING',
  /**
   * A model node names a provider Redflow does not know (`provider` must be `openai`, `anthropic`,
   * `ollama`, `vllm`, `llamacpp`, `openai-compatible` or `scripted`); the hint lists them.
   */
  MODEL_PROVIDER_UNKNOWN: 'MODEL_PROVIDER_UNKNOWN',
  /** A scripted model's answers file (`--script`, or a flow's `answersFile`) does not exist or cannot be read. */
  ANSWERS_FILE_NOT_FOUND: 'ANSWERS_FILE_NOT_FOUND',

  // Tool actors.
  TOOL_FAILED: 'TOOL_FAILED',
  TOOL_TIMEOUT: 'TOOL_TIMEOUT',
  TOOL_HOST_NOT_ALLOWED: 'TOOL_HOST_NOT_ALLOWED',
  TOOL_RESPONSE_TOO_LARGE: 'TOOL_RESPONSE_TOO_LARGE',
  TOOL_HTTP_STATUS: 'TOOL_HTTP_STATUS',
  TOOL_MODULE_INVALID: 'TOOL_MODULE_INVALID',
  TOOL_CONFIG_INVALID: 'TOOL_CONFIG_INVALID',
  /** The store of completed tool results (by idempotency key) could not be read or written, or the key is invalid. */
  TOOL_RESULT_STORE_FAILED: 'TOOL_RESULT_STORE_FAILED',
  /** A subagent's run ended `blocked` (its model failed, it timed out, it was aborted…): the message gives its error and trace id. */
  SUBAGENT_FAILED: 'SUBAGENT_FAILED',
  /** The trace id a subagent call derives for its run holds another run's log (not one started by this call). */
  SUBAGENT_TRACE_TAKEN: 'SUBAGENT_TRACE_TAKEN',
  /** A remote A2A agent (`agent.a2a`) cannot be reached, or its agent card cannot be read: found by `redflow validate` and at run start. */
  A2A_AGENT_UNAVAILABLE: 'A2A_AGENT_UNAVAILABLE',
  /** A remote A2A agent's task ended failed or rejected, or asked a question (input-required): the model sees this failure. */
  A2A_TASK_FAILED: 'A2A_TASK_FAILED',
  /** Another worker is executing the call with this idempotency key right now; ask again later (retryable). */
  TOOL_CALL_IN_PROGRESS: 'TOOL_CALL_IN_PROGRESS',
  /** A tool's reply nests deeper than model answers may (64 levels): the model sees this failure instead. */
  TOOL_OUTPUT_TOO_DEEP: 'TOOL_OUTPUT_TOO_DEEP',
  /** An agent definition's tool returned a result its `outputSchema` refuses: the call's failure, which the model sees. */
  TOOL_OUTPUT_INVALID: 'TOOL_OUTPUT_INVALID',
  /** A person denied the tool call (`requiresApproval`): it was never made; the model sees this, with the reason, as its observation. */
  TOOL_DENIED: 'TOOL_DENIED',
  /** An MCP server (`tool.mcp`) could not be started or reached, or did not list its tools in time: named in the message, before the run starts. */
  MCP_SERVER_UNAVAILABLE: 'MCP_SERVER_UNAVAILABLE',
  /**
   * A name that cannot be a tool's: an MCP server lists a tool whose name is not a valid Redflow tool
   * name (1-64 letters, digits, '_' or '-', with the prefix), or a flow's id makes no MCP tool name
   * (over 64 characters once made one, or the same as another flow's) and the flow is not offered.
   */
  MCP_TOOL_NAME_INVALID: 'MCP_TOOL_NAME_INVALID',
  /** An MCP server lists a tool whose input schema is not a valid JSON Schema: the tool is named in the message. */
  MCP_TOOL_SCHEMA_INVALID: 'MCP_TOOL_SCHEMA_INVALID',
  /** A `tool.mcp` node's `include` names a tool its server does not list. */
  MCP_TOOL_NOT_FOUND: 'MCP_TOOL_NOT_FOUND',
  /**
   * A flow saved through `redflow serve`'s API has a `tool.mcp` node with a `command` (it would start
   * that program on the server), and the server was not started with `--allow-mcp-commands`.
   */
  MCP_COMMAND_NOT_ALLOWED: 'MCP_COMMAND_NOT_ALLOWED',

  // Memory actors.
  MEMORY_FAILED: 'MEMORY_FAILED',
  MEMORY_KEY_INVALID: 'MEMORY_KEY_INVALID',
  /** A conversation's stored memory nests deeper than model answers may (64 levels): the run does not start. */
  MEMORY_RECORD_TOO_DEEP: 'MEMORY_RECORD_TOO_DEEP',
  /** A conversation's stored memory is longer as JSON than model answers may be: the run does not start. */
  MEMORY_RECORD_TOO_LARGE: 'MEMORY_RECORD_TOO_LARGE',

  // Transport.
  TRANSPORT_NO_RESPONDER: 'TRANSPORT_NO_RESPONDER',
  TRANSPORT_TIMEOUT: 'TRANSPORT_TIMEOUT',
  TRANSPORT_CLOSED: 'TRANSPORT_CLOSED',
  TRANSPORT_BAD_MESSAGE: 'TRANSPORT_BAD_MESSAGE',
  /** No connection to the message server could be made (unreachable, refused, bad credentials). */
  TRANSPORT_CONNECT_FAILED: 'TRANSPORT_CONNECT_FAILED',
  /** The message server refused to let this connection publish or subscribe on a subject. */
  TRANSPORT_PERMISSION_DENIED: 'TRANSPORT_PERMISSION_DENIED',
  /** A subject prefix that cannot name its own stream and buckets (only lowercase tokens without `_`). */
  SUBJECT_PREFIX_INVALID: 'SUBJECT_PREFIX_INVALID',

  // Event log.
  LOG_RECORD_CORRUPT: 'LOG_RECORD_CORRUPT',
  LOG_RECORD_TORN: 'LOG_RECORD_TORN',
  LOG_SEQUENCE_GAP: 'LOG_SEQUENCE_GAP',
  LOG_CONCURRENT_WRITER: 'LOG_CONCURRENT_WRITER',
  LOG_EMPTY: 'LOG_EMPTY',
  LOG_NOT_FOUND: 'LOG_NOT_FOUND',
  /** The event log's server (JetStream) cannot be reached or refused the operation. */
  LOG_STORE_UNAVAILABLE: 'LOG_STORE_UNAVAILABLE',
  /** The NATS server (or its account) has no JetStream, where distributed mode keeps its log and state. */
  JETSTREAM_NOT_ENABLED: 'JETSTREAM_NOT_ENABLED',
  /** The cluster cannot keep the stream or buckets with the replicas (or placement tags) asked for: more than its servers. */
  JETSTREAM_REPLICAS_UNAVAILABLE: 'JETSTREAM_REPLICAS_UNAVAILABLE',
  LOG_TRACE_MISMATCH: 'LOG_TRACE_MISMATCH',
  /** Every record is well formed, but the log is not a path the statechart can take (an event after the ending, a tool not allowed, …). */
  LOG_PATH_INVALID: 'LOG_PATH_INVALID',
  LOG_CLOSED: 'LOG_CLOSED',
  /** A follow of a run asked to start after a seq that is not a whole number ≥ 0. */
  LOG_CURSOR_INVALID: 'LOG_CURSOR_INVALID',
  /**
   * The trace stream stores the log on `<prefix>.trace.>` (the layout before the log subjects
   * `<prefix>.log.>`), and this NATS user may not move it; the hint says who can.
   */
  LOG_STREAM_OLD_LAYOUT: 'LOG_STREAM_OLD_LAYOUT',

  // Flow graphs: one agent core and every capability connected to it first, then the rest.
  NO_AGENT_CORE: 'NO_AGENT_CORE',
  MULTIPLE_AGENT_CORES: 'MULTIPLE_AGENT_CORES',
  CAPABILITY_NOT_CONNECTED: 'CAPABILITY_NOT_CONNECTED',
  FLOW_NOT_FOUND: 'FLOW_NOT_FOUND',
  /** A client asked a cluster for a run of a flow its workers do not run. */
  FLOW_MISMATCH: 'FLOW_MISMATCH',
  FLOW_INVALID_JSON: 'FLOW_INVALID_JSON',
  FLOW_SCHEMA_MISMATCH: 'FLOW_SCHEMA_MISMATCH',
  UNKNOWN_NODE_TYPE: 'UNKNOWN_NODE_TYPE',
  DUPLICATE_NODE_ID: 'DUPLICATE_NODE_ID',
  DUPLICATE_EDGE_ID: 'DUPLICATE_EDGE_ID',
  EDGE_NODE_MISSING: 'EDGE_NODE_MISSING',
  EDGE_NOT_ALLOWED: 'EDGE_NOT_ALLOWED',
  EDGE_KIND_MISMATCH: 'EDGE_KIND_MISMATCH',
  START_NODE_MISSING: 'START_NODE_MISSING',
  NODE_CONFIG_INVALID: 'NODE_CONFIG_INVALID',
  NO_MODEL: 'NO_MODEL',
  MULTIPLE_MODELS: 'MULTIPLE_MODELS',
  /** The agent core's `verification.model` names no model.llm node of the flow. */
  VERIFIER_MODEL_NOT_FOUND: 'VERIFIER_MODEL_NOT_FOUND',
  MULTIPLE_MEMORIES: 'MULTIPLE_MEMORIES',
  ALLOWED_TOOL_NOT_CONNECTED: 'ALLOWED_TOOL_NOT_CONNECTED',
  DUPLICATE_TOOL_NAME: 'DUPLICATE_TOOL_NAME',
  TOOL_WITHOUT_INPUT_SCHEMA: 'TOOL_WITHOUT_INPUT_SCHEMA',
  NO_TOOLS: 'NO_TOOLS',
  /** The agent's `requiresApproval` names a tool that is not in its `allowedTools`. */
  APPROVAL_TOOL_NOT_ALLOWED: 'APPROVAL_TOOL_NOT_ALLOWED',
  /** Warning: a node needs an environment variable (a model's API key, a database's connection string) that is not set where runs run. */
  ENV_NOT_SET: 'ENV_NOT_SET',
  /** Warning: a tool connected to the agent core is left out of its explicit `allowedTools`. */
  TOOL_NOT_IN_ALLOWED_TOOLS: 'TOOL_NOT_IN_ALLOWED_TOOLS',
  /** A flow file is larger than the loader accepts (5 MiB). */
  FLOW_TOO_LARGE: 'FLOW_TOO_LARGE',
  /** A file a flow names (tool module, answers file, memory store) is not inside the folders allowed for flow files. */
  FLOW_FILE_OUTSIDE_ROOTS: 'FLOW_FILE_OUTSIDE_ROOTS',
  /** A flow with a `tool.flow` (a tool whose body is a Node-RED flow) runs only in Node-RED. */
  FLOW_TOOL_NODE_RED_ONLY: 'FLOW_TOOL_NODE_RED_ONLY',
  /** An `agent.ref` names a flow file that does not exist. */
  AGENT_REF_NOT_FOUND: 'AGENT_REF_NOT_FOUND',
  /** An `agent.ref` names a flow file that is not a valid flow (the message gives its first error). */
  AGENT_REF_INVALID: 'AGENT_REF_INVALID',
  /** The `agent.ref`s of flows lead back to a flow already on the way (A → B → A): its runs would never end. */
  AGENT_REF_CYCLE: 'AGENT_REF_CYCLE',
  /** Subagents nest deeper than the limit (5 levels below the flow that is run). */
  AGENT_REF_TOO_DEEP: 'AGENT_REF_TOO_DEEP',

  // Command line.
  CLI_USAGE: 'CLI_USAGE',
  /** The file given to `--input-file` does not exist or cannot be read. */
  INPUT_FILE_NOT_FOUND: 'INPUT_FILE_NOT_FOUND',

  // Eval suites (`redflow eval`, src/evals/): a case's messages name the case.
  EVAL_SUITE_NOT_FOUND: 'EVAL_SUITE_NOT_FOUND',
  EVAL_CASE_INVALID: 'EVAL_CASE_INVALID',
  EVAL_CASE_LOG_INVALID: 'EVAL_CASE_LOG_INVALID',
  /** A case sets `limits.cost` but neither it (`limits.price`) nor the flow's budget prices the eval run's model. */
  EVAL_CASE_NO_PRICE: 'EVAL_CASE_NO_PRICE',
  EVAL_CASE_EXISTS: 'EVAL_CASE_EXISTS',
  EVAL_OUT_DIR_NOT_EMPTY: 'EVAL_OUT_DIR_NOT_EMPTY',
  EVAL_JUDGE_ANSWER_INVALID: 'EVAL_JUDGE_ANSWER_INVALID',
  EVAL_BASELINE_INVALID: 'EVAL_BASELINE_INVALID',
  EVAL_SEAM_UNAVAILABLE: 'EVAL_SEAM_UNAVAILABLE',

  // Run diffs (`redflow diff`).
  /** A log given to `redflow diff` cannot be read as a run: not a file, no events, or damaged records. */
  DIFF_LOG_UNREADABLE: 'DIFF_LOG_UNREADABLE',
  // Forked runs (`forkRun`, `redflow fork`).
  /** The fork point is not an iteration the parent's log started (below 1, or past its end). */
  FORK_POINT_OUT_OF_RANGE: 'FORK_POINT_OUT_OF_RANGE',
  /** The parent run has not ended and a live process holds its log: its prefix may still change. */
  FORK_RUN_STILL_RUNNING: 'FORK_RUN_STILL_RUNNING',
  /** The parent's prefix is not a path the fork's flow can take (a tool it no longer has, an input its trigger refuses). */
  FORK_PREFIX_INCOMPATIBLE: 'FORK_PREFIX_INCOMPATIBLE',

  // HTTP API (`redflow serve`).
  /** No route for this method and path. */
  HTTP_NOT_FOUND: 'HTTP_NOT_FOUND',
  HTTP_METHOD_NOT_ALLOWED: 'HTTP_METHOD_NOT_ALLOWED',
  /** The bearer token is missing or wrong. */
  HTTP_UNAUTHORIZED: 'HTTP_UNAUTHORIZED',
  HTTP_BODY_TOO_LARGE: 'HTTP_BODY_TOO_LARGE',
  HTTP_BODY_NOT_JSON: 'HTTP_BODY_NOT_JSON',
  /** The body is JSON but not what the endpoint's schema says. */
  HTTP_BODY_INVALID: 'HTTP_BODY_INVALID',
  HTTP_UNSUPPORTED_MEDIA_TYPE: 'HTTP_UNSUPPORTED_MEDIA_TYPE',
  /** A flow id in a path is not a safe name inside the flows directory. */
  FLOW_ID_INVALID: 'FLOW_ID_INVALID',
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  /** A run's log stops early and nothing runs it (killed mid-run): it goes on only when `redflow resume` continues it. */
  RUN_INTERRUPTED: 'RUN_INTERRUPTED',
  /** The run has already ended (it cannot be aborted). */
  RUN_ALREADY_FINISHED: 'RUN_ALREADY_FINISHED',
  /** `serve` refuses to listen on a non-local address without a bearer token. */
  SERVE_TOKEN_REQUIRED: 'SERVE_TOKEN_REQUIRED',
  /** A query parameter (`limit`, `after`, …) or the `Last-Event-ID` header is not a value the route takes. */
  HTTP_QUERY_INVALID: 'HTTP_QUERY_INVALID',
  /** Without a token, `serve` answers only requests whose `Host` is a local name (DNS rebinding). */
  HTTP_HOST_NOT_ALLOWED: 'HTTP_HOST_NOT_ALLOWED',
  /** `serve` has no editor build to serve (`dist/editor` is missing: run `npm run build`). */
  EDITOR_NOT_BUILT: 'EDITOR_NOT_BUILT',
  /** The server is shutting down and starts no new run. */
  SERVER_CLOSING: 'SERVER_CLOSING',
  /** The server failed in a way it did not expect (a bug: the details are in the server's log only). */
  HTTP_INTERNAL_ERROR: 'HTTP_INTERNAL_ERROR',

  // The step service (`POST /api/agent/react_step`).
  /** A step's conversation_history cannot be read as a session: an observation with no call before it, a step with nothing to continue. */
  REACT_STEP_HISTORY_INVALID: 'REACT_STEP_HISTORY_INVALID',
  /** A step's conversation_history disagrees with the session's log: another tool, other arguments or another result than the run recorded. */
  REACT_STEP_HISTORY_CONFLICT: 'REACT_STEP_HISTORY_CONFLICT',
  /** An AG-UI request is not a RunAgentInput Redflow can take: not the schema, no user message to start from, a resume entry or tool message that names no wait of a Redflow run. */
  AGUI_INPUT_INVALID: 'AGUI_INPUT_INVALID',
  /** A step names a model the server is not configured with (`serve --models <file>`). */
  REACT_STEP_MODEL_UNKNOWN: 'REACT_STEP_MODEL_UNKNOWN',
  /** The system prompt and the query alone need more tokens than `tokenLimit − reservedOutputTokens`. */
  CONTEXT_BUDGET_EXCEEDED: 'CONTEXT_BUDGET_EXCEEDED',

  // Agent definitions (`AgentDefinition`, `AgentRegistry`, `AgentExecutor`).
  /** An agent definition is not one: a field missing or of the wrong kind (every problem is listed). */
  AGENT_DEFINITION_INVALID: 'AGENT_DEFINITION_INVALID',
  /** An agent written as Markdown (`.agent.md`) is not one: no front matter, an unknown key, a REACT_CYCLE action naming no tool (the message gives the file's line). */
  AGENT_MARKDOWN_INVALID: 'AGENT_MARKDOWN_INVALID',
  /** An agent registry already holds an agent of that name. */
  AGENT_ALREADY_REGISTERED: 'AGENT_ALREADY_REGISTERED',
  /** A prompt names `${variable}` and the run's inputs do not give it. */
  TEMPLATE_VARIABLE_MISSING: 'TEMPLATE_VARIABLE_MISSING',
  /** A run's inputs do not match the definition's `inputConfig` (a required one missing, a wrong type, an unknown name). */
  AGENT_INPUT_INVALID: 'AGENT_INPUT_INVALID',
  /** The final answer of a definition's run does not match its `outputConfig.schema` (the run still ends done; the result says so). */
  AGENT_OUTPUT_INVALID: 'AGENT_OUTPUT_INVALID',

  // The MCP server (`redflow mcp`, `redflow serve --mcp`): flows served as MCP tools.
  /** A `tools/call` names no tool this server offers (no flow by that tool name, or one left out with --only). */
  MCP_TOOL_UNKNOWN: 'MCP_TOOL_UNKNOWN',
  /** A `tools/call`'s arguments are not what the flow's tool takes (its input schema): nothing was run. */
  MCP_ARGUMENTS_INVALID: 'MCP_ARGUMENTS_INVALID',

  // Stately inspector.
  /** The inspector relay or WebSocket could not be reached. */
  INSPECT_UNAVAILABLE: 'INSPECT_UNAVAILABLE',

  // Node-RED (`redflow convert`, `redflow serve --node-red`).
  /** What was given as Node-RED flows is not: not a JSON array of nodes, each with a string `id` and `type`. */
  NODE_RED_FLOWS_INVALID: 'NODE_RED_FLOWS_INVALID',
  /** No Node-RED tab (flow) by that id or label, none with Redflow nodes, or several where one must be named. */
  NODE_RED_TAB_NOT_FOUND: 'NODE_RED_TAB_NOT_FOUND',
  /** A node id of the flow is taken by a node of another Node-RED tab (ids are unique across a Node-RED). */
  NODE_RED_ID_CONFLICT: 'NODE_RED_ID_CONFLICT',
  /** A secret written in the flow (a `tool.postgres` connectionString) that Node-RED keeps in its credentials store only. */
  NODE_RED_SECRET_IN_FLOW: 'NODE_RED_SECRET_IN_FLOW',
  /** A node kind an agent in Node-RED cannot have (`tool.client`): the flow is saved, but does not run there. */
  NODE_RED_NODE_UNSUPPORTED: 'NODE_RED_NODE_UNSUPPORTED',
  /** Node-RED's Admin API cannot be reached, or answered in a way it should not (the status and body say). */
  NODE_RED_UNREACHABLE: 'NODE_RED_UNREACHABLE',
  /** Node-RED refused the request: its adminAuth is on and the token is missing, wrong or lacks the permission. */
  NODE_RED_UNAUTHORIZED: 'NODE_RED_UNAUTHORIZED',
  /** The flows changed in Node-RED while a save merged into them, every time it tried. */
  NODE_RED_FLOWS_CHANGED: 'NODE_RED_FLOWS_CHANGED',
  /** The flow's agent is not running in Node-RED (not deployed yet, stopped, or node-red-contrib-redflow not installed). */
  NODE_RED_AGENT_NOT_RUNNING: 'NODE_RED_AGENT_NOT_RUNNING',

  // Packages.
  /**
   * An optional package a feature needs is not installed: `pg` for `tool.postgres`, `tsx` for a
   * `tool.module` written in TypeScript. The hint names the `npm install` that fixes it.
   */
  DEPENDENCY_MISSING: 'DEPENDENCY_MISSING',
} as const;

/** One of the stable codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error as plain data: what every actor reply, event and CLI report carries.
 * `hint` tells a user how to fix it when there is something to do.
 *
 * @example
 * ```ts
 * try {
 *   await runFlowFile({ flowPath: 'flow.json', input: 'hi' });
 * } catch (error) {
 *   if (error instanceof RedflowError) {
 *     const info: ErrorInfo = error.toInfo();
 *     console.error(info.code, info.message, info.hint ?? '');
 *   }
 * }
 * ```
 */
export interface ErrorInfo {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint?: string;
  /** True when trying the same thing again may succeed (rate limits, 5xx, timeouts). */
  readonly retryable?: boolean;
  /** JSON pointer (or flow path) to what was wrong, when there is one. */
  readonly path?: string;
}

/**
 * The one exception class Redflow throws. It carries the same data as {@link ErrorInfo}, so it can
 * be turned into data (`toInfo()`) at any boundary: an actor reply, an event, the CLI.
 *
 * @example
 * ```ts
 * throw new RedflowError({ code: ErrorCode.FLOW_NOT_FOUND, message: `no file ${path}` });
 * ```
 */
export class RedflowError extends Error {
  override readonly name = 'RedflowError';
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly retryable: boolean;
  readonly path: string | undefined;

  constructor(info: ErrorInfo, options?: { cause?: unknown }) {
    super(info.message, options);
    this.code = info.code;
    this.hint = info.hint;
    this.retryable = info.retryable ?? false;
    this.path = info.path;
  }

  /** The error as plain, serialisable data. */
  toInfo(): ErrorInfo {
    return errorInfo(this.code, this.message, {
      hint: this.hint,
      retryable: this.retryable || undefined,
      path: this.path,
    });
  }
}

/** One wrong field of a request body: its JSON pointer and what is wrong with it. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/**
 * A {@link RedflowError} with what a client needs to fix its request: the flow diagnostics of a
 * flow that does not validate (each a `FlowDiagnostic` of `src/flows/diagnostics.ts`), the wrong
 * fields of a body, or the headers a status calls for (`Allow` on a 405).
 *
 * @example
 * ```ts
 * throw new ApiError(errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${traceId}`));
 * ```
 */
export class ApiError extends RedflowError {
  constructor(
    info: ErrorInfo,
    readonly extra: {
      readonly diagnostics?: readonly (ErrorInfo & { readonly severity: 'error' | 'warning'; readonly nodeId?: string; readonly edgeId?: string })[];
      readonly headers?: Readonly<Record<string, string>>;
      readonly fields?: readonly FieldError[];
    } = {},
  ) {
    super(info);
  }
}

/** Builds an {@link ErrorInfo} without `undefined` members, so it serialises identically everywhere. */
export function errorInfo(
  code: ErrorCode,
  message: string,
  extra: { hint?: string | undefined; retryable?: boolean | undefined; path?: string | undefined } = {},
): ErrorInfo {
  const info: { code: ErrorCode; message: string; hint?: string; retryable?: boolean; path?: string } = {
    code,
    message,
  };
  if (extra.hint !== undefined) info.hint = extra.hint;
  if (extra.retryable) info.retryable = true;
  if (extra.path !== undefined) info.path = extra.path;
  return info;
}

/** Turns anything thrown into {@link ErrorInfo}; unknown throwables get `fallback` as their code. */
export function toErrorInfo(thrown: unknown, fallback: ErrorCode): ErrorInfo {
  if (thrown instanceof RedflowError) return thrown.toInfo();
  if (thrown instanceof Error) return errorInfo(fallback, thrown.message);
  return errorInfo(fallback, String(thrown));
}
