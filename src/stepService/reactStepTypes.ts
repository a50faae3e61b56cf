import type { TokenUsage } from '../contracts/schema-types.js';
import type { ErrorInfo } from '../errors.js';

/**
 * The wire types of `POST /api/agent/react_step`, as schemas/http/react-step-request.schema.json and
 * react-step-response.schema.json define them (snake_case, as existing clients of this API send it).
 */

/** One turn of a session's conversation. */
export interface ConversationTurn {
  readonly role: 'user' | 'assistant' | 'tool_observation';
  readonly content: string;
  readonly timestamp?: string;
  /** On an assistant turn that proposed a tool. */
  readonly toolCall?: { readonly name: string; readonly parameters: Record<string, unknown> };
  /** On a tool_observation turn: what the client's execution of the tool gave. */
  readonly toolResult?: { readonly success: boolean; readonly result?: unknown; readonly error?: string };
}

/** A code chunk from the client's semantic search. */
export type VectorSearchResult = string | { readonly content: string; readonly file_path?: string; readonly score?: number };

/** The model and its window, as the client chooses them. */
export interface LlmConfig {
  readonly modelName: string;
  readonly tokenLimit?: number;
  readonly reservedOutputTokens?: number;
  readonly temperature?: number;
}

/** The body of `POST /api/agent/react_step`. */
export interface ReactStepRequest {
  readonly project_id?: string;
  readonly session_id: string;
  readonly user_query: string;
  readonly conversation_history: readonly ConversationTurn[];
  readonly explicit_context_paths?: readonly string[];
  readonly pinned_item_ids_to_include?: readonly string[];
  readonly implicit_context?: { readonly last_focused_file_path?: string };
  readonly vector_search_results_to_include?: readonly VectorSearchResult[];
  readonly available_tools_prompt_segment?: string;
  readonly llm_config: LlmConfig;
  /** Used for this request's model calls only: never stored, logged or echoed. */
  readonly user_api_keys?: { readonly llmKey?: string };
  readonly max_iterations_left?: number;
  /** What the whole session may spend on its model (docs/budgets.md): each query's run gets what the earlier ones left. */
  readonly session_budget?: { readonly maxTokens?: number; readonly maxCost?: number };
}

/** What a step decided. */
export type ReactStepStatus = 'action_proposed' | 'direct_response_provided' | 'error';

/** The tool call a step proposes: the client runs it and sends back a `tool_observation` turn. */
export interface ActionDetails {
  readonly tool_name: string;
  readonly tool_args: Record<string, unknown>;
  /** The action as the model wrote it (JSON or `Action: name(…)`). */
  readonly raw_action_string: string;
}

/** The answer of `POST /api/agent/react_step`. */
export interface ReactStepResponse {
  readonly session_id: string;
  /** The run this step belongs to: replay, watch or inspect it like any run. */
  readonly trace_id?: string;
  readonly thought: string | null;
  readonly action_details: ActionDetails | null;
  readonly direct_response: string | null;
  readonly updated_conversation_history: readonly ConversationTurn[];
  readonly iterations_remaining: number;
  /** What this query's run has spent on its model so far, as its log's fold says. */
  readonly usage?: TokenUsage;
  readonly status: ReactStepStatus;
  /** With status `error`: what went wrong. */
  readonly error?: ErrorInfo;
}
