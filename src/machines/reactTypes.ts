import type {
  AgentCoreReactConfig,
  AgentEnvelope,
  FlowRef,
  HistoryMessage,
  MemoryRequestedData,
  ParentCall,
  RunEnding,
  TokenUsage,
  ToolSpec,
} from '../contracts/schema-types.js';
import type { ErrorInfo } from '../errors.js';
import type { RecordedFact } from '../events/eventTypes.js';
import type { ResumePoint } from '../events/resumePoint.js';
import type { MemoryAppendRequest, ModelRequest, ToolRequest, ToolResult } from './protocol.js';
import type { AnswerRules, AnswerValidation } from '../validation/validateModelAnswer.js';
import type { ContextBudget } from './contextBudget.js';
import type { RunBudget } from './contextBudget.js';

export type { ResumeAt } from '../events/eventOrder.js';
export type { ResumePoint } from '../events/resumePoint.js';

/** Where a run keeps its conversation: the turn is added to it before the run's ending is recorded. */
export interface RunMemorySettings {
  readonly conversationId: string;
  /** Turns kept in the conversation's memory. */
  readonly maxTurns: number;
}

/** What the run was started with, recorded in `run.started`. */
export interface RunStart {
  readonly input: unknown;
  readonly startedAt: string;
  readonly memory?: Record<string, unknown>;
  readonly conversationId?: string;
  readonly flow?: FlowRef;
  /** Earlier turns of the conversation the run continues, shown to the model before its input. */
  readonly history?: readonly HistoryMessage[];
  /** Context shown to the model with its input (files, search results), as one block of text. */
  readonly context?: string;
  /** The call that started this run as a subagent of another run. */
  readonly parent?: ParentCall;
}

/** Input of the REACT machine. */
export interface ReactMachineInput {
  readonly traceId: string;
  /** The normalised agent config (defaults applied). */
  readonly agent: AgentCoreReactConfig;
  /** What the model is told about each allowed tool. */
  readonly tools: readonly ToolSpec[];
  readonly rules: AnswerRules;
  readonly run: RunStart;
  /** The run timeout the host enforces (by sending `timeout`), for the outcome's message. */
  readonly timeoutMs?: number;
  /** Continue a run from its log instead of starting one. */
  readonly resume?: ResumePoint;
  /** Save the run's turn in its conversation's memory as its last step. */
  readonly memory?: RunMemorySettings;
  /**
   * Handed, untouched, to the transport actor: how the host's actor reaches the world. A thunk, so
   * snapshots and the inspector never try to serialise it.
   */
  readonly effects?: () => unknown;
  /**
   * The model's context window: when set, each request leaves out the oldest messages that do not
   * fit (never the system prompt or the input) and `model.requested` logs how many.
   */
  readonly contextBudget?: ContextBudget;
  /** What the run may spend on its model (agent `budget`): metered on each `model.answered`, checked before each call. */
  readonly budget?: RunBudget;
}

/** What does not change during a run: kept in one context member, so each update copies little. */
export interface ReactSettings {
  readonly traceId: string;
  readonly agent: AgentCoreReactConfig;
  readonly tools: readonly ToolSpec[];
  readonly rules: AnswerRules;
  readonly systemPrompt: string;
  readonly run: RunStart;
  readonly timeoutMs: number | undefined;
  readonly resume: ResumePoint | undefined;
  readonly memory: RunMemorySettings | undefined;
  readonly effects: (() => unknown) | undefined;
  readonly contextBudget: ContextBudget | undefined;
  readonly budget: RunBudget | undefined;
}

/** The machine's context. The envelope in it is only ever changed through `evolve`. */
export interface ReactContext {
  readonly settings: ReactSettings;
  readonly envelope: AgentEnvelope;
  /** The judgement of the current iteration's answer. */
  readonly validation: AnswerValidation | undefined;
  /** The current answer's original length when the log holds it cut (it was over the limit). */
  readonly answerLength: number | undefined;
  /** How the run ends, once decided: the terminal event `concluding` records. */
  readonly ending: RunEnding | undefined;
  /** The save of the run's turn, once requested. */
  readonly memoryRequested: MemoryRequestedData | undefined;
  /** True once the memory step is over (saved, or failed and folded into the ending). */
  readonly memoryDone: boolean;
}

/**
 * Events the machine takes: the transport actor's replies, and from the host the abort, the
 * timeout and the answers to a wait (a client tool's result comes as `tool.result`).
 */
export type ReactEvent =
  | {
      readonly type: 'model.answer';
      readonly text: string;
      readonly durationMs: number;
      readonly attempts: number;
      readonly usage?: TokenUsage;
      /** Set when a fallback answered: which one, and the models that failed before it. */
      readonly answeredBy?: unknown;
      readonly fallbacks?: unknown;
    }
  | { readonly type: 'model.failure'; readonly error: ErrorInfo; readonly durationMs: number }
  | { readonly type: 'tool.result'; readonly result: ToolResult; readonly durationMs: number }
  /** From the transport actor: the call in flight said where its work lives (a remote task), to be logged. */
  | { readonly type: 'tool.attached'; readonly idempotencyKey: string; readonly handle: Readonly<Record<string, string>> }
  | { readonly type: 'memory.saved'; readonly durationMs: number }
  | { readonly type: 'memory.failure'; readonly error: ErrorInfo; readonly durationMs: number }
  | { readonly type: 'abort'; readonly reason?: string }
  /** From the host: a person approved the call the run waits on (`awaitingApproval`). */
  | { readonly type: 'tool.approve'; readonly reason?: string }
  /** From the host: a person denied the call the run waits on; it becomes the model's observation. */
  | { readonly type: 'tool.deny'; readonly reason?: string }
  /** From the host: a person's answer to the model's question (`awaitingHuman`); it becomes the model's observation. */
  | { readonly type: 'human.answer'; readonly text: string }
  /** From the host: the wait's deadline passed (the machine has no clock: the host reads it off the log). */
  | { readonly type: 'wait.expire' }
  /** Sent by the host when the run's timeout passes (the machine has no clock of its own). */
  | { readonly type: 'timeout' };

/** Commands the machine sends to its transport actor. */
export type TransportCommand =
  | { readonly type: 'model.request'; readonly request: ModelRequest }
  | { readonly type: 'tool.request'; readonly request: ToolRequest }
  | { readonly type: 'memory.request'; readonly request: MemoryAppendRequest };

/** What the machine emits: one per recorded transition, for the recorder to append. */
export interface FactEmitted {
  readonly type: 'fact';
  readonly fact: RecordedFact;
}

/** Input of the transport actor the machine invokes. */
export interface TransportActorInput {
  readonly traceId: string;
  readonly effects: (() => unknown) | undefined;
}
