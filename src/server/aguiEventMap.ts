import type { AgentEnvelope } from '../contracts/schema-types.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import type { AgentEvent, AgentEventType } from '../events/eventTypes.js';
import type { RunWait } from '../events/pendingWait.js';
import type { RunChunk } from '../runtime/serveActors.js';

/**
 * How a Redflow run reads as an AG-UI stream: the one table of the mapping (docs/ag-ui.md
 * reproduces it, and a test checks that it does). Pure: it turns the run's logged events, the
 * pieces of its answers and the wait it parks in into AG-UI events; the HTTP side encodes them.
 */

/** An AG-UI event as plain data (`@ag-ui/core`'s `BaseEvent` shape: its `type` one of `EventType`). */
export interface AguiEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** What the mapping keeps between events: the step (iteration) and the text message that are open. */
interface MapState {
  readonly traceId: string;
  readonly threadId: string;
  readonly runId: string;
  envelope: AgentEnvelope;
  /** The iteration whose step is open. */
  step?: number;
  /** The text message streamed from the pieces of an answer, while it is open. */
  draft?: { readonly id: string; readonly iteration: number; readonly attempt: number; text: string };
  /** The highest iteration whose answer is in the log: a piece of it arriving later is dropped. */
  answered: number;
}

type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/** One row of the table: the AG-UI events a Redflow event becomes, in words, and how. */
interface Row<T extends AgentEventType> {
  readonly becomes: string;
  readonly map: (event: EventOf<T>, state: MapState) => AguiEvent[];
}

/**
 * Every Redflow event type and what it becomes. Each event of an iteration first opens that
 * iteration's step (`STEP_STARTED "iteration <n>"`, after `STEP_FINISHED` and a `STATE_SNAPSHOT`
 * of the step before), so a stream that starts mid-run still opens its step.
 *
 * @example
 * ```ts
 * AGUI_EVENT_MAP['tool.completed'].becomes; // 'TOOL_CALL_RESULT (content: the output as JSON, or "<code>: <message>")'
 * ```
 */
export const AGUI_EVENT_MAP: { readonly [T in AgentEventType]: Row<T> } = {
  'run.started': { becomes: 'STATE_SNAPSHOT (the envelope: input, state, model)', map: (_event, state) => [snapshot(state)] },
  'run.resumed': { becomes: 'nothing', map: () => [] },
  'run.forked': { becomes: "nothing: the parent's prefix that follows it is mapped as the run's own events", map: () => [] },
  'model.requested': { becomes: 'STEP_STARTED "iteration <n>" (after STEP_FINISHED and STATE_SNAPSHOT of the step before)', map: () => [] },
  'model.answered': {
    becomes: 'nothing: the answer streamed as TEXT_MESSAGE_CONTENT from its pieces (below); later pieces of it are dropped',
    map: (event, state) => {
      state.answered = Math.max(state.answered, event.iteration);
      return [];
    },
  },
  'tool.requested': {
    becomes: 'TEXT_MESSAGE_END of the streamed answer, TOOL_CALL_START, TOOL_CALL_ARGS (the input as JSON), TOOL_CALL_END; toolCallId is the idempotency key',
    map: (event, state) => [
      ...endDraft(state),
      { type: 'TOOL_CALL_START', toolCallId: event.data.idempotencyKey, toolCallName: event.data.tool },
      { type: 'TOOL_CALL_ARGS', toolCallId: event.data.idempotencyKey, delta: JSON.stringify(event.data.input) },
      { type: 'TOOL_CALL_END', toolCallId: event.data.idempotencyKey },
    ],
  },
  'tool.approved': { becomes: 'nothing (the approval was the answer to an interrupt)', map: () => [] },
  'tool.attached': { becomes: 'nothing (where the call\'s remote work lives is for a resume)', map: () => [] },
  'tool.denied': {
    becomes: 'TOOL_CALL_RESULT (content: "TOOL_DENIED: <reason>")',
    map: (event) => [toolResult(event.data.idempotencyKey, `${event.data.error.code}: ${event.data.error.message}`)],
  },
  'tool.completed': {
    becomes: 'TOOL_CALL_RESULT (content: the output as JSON, or "<code>: <message>")',
    map: (event) => {
      const { ok, output, error } = event.data;
      return [toolResult(event.data.idempotencyKey, ok ? json(output) : `${error?.code ?? 'TOOL_FAILED'}: ${error?.message ?? 'the tool failed'}`)];
    },
  },
  'human.requested': { becomes: 'TEXT_MESSAGE_END of the streamed answer (the question is an interrupt, below)', map: (_event, state) => endDraft(state) },
  'human.answered': { becomes: 'nothing (the answer came from the frontend)', map: () => [] },
  'output.rejected': { becomes: 'TEXT_MESSAGE_END of the streamed answer (the model is asked again)', map: (_event, state) => endDraft(state) },
  'answer.rejected': { becomes: 'TEXT_MESSAGE_END of the streamed answer (the model is shown its mistake and asked again)', map: (_event, state) => endDraft(state) },
  'verification.requested': { becomes: 'nothing (the final answer is verified before the run ends)', map: () => [] },
  'verification.completed': {
    becomes: 'passed: nothing (the run ends next); failed: TEXT_MESSAGE_END of the streamed answer (the model revises it)',
    map: (event, state) => (event.data.passed ? [] : endDraft(state)),
  },
  'memory.requested': { becomes: 'nothing', map: () => [] },
  'memory.saved': { becomes: 'nothing', map: () => [] },
  'run.completed': {
    becomes: 'the answer\'s text message (below), STEP_FINISHED, STATE_SNAPSHOT, RUN_FINISHED (outcome success, result: the outcome)',
    map: (event, state) => [
      ...answerMessage(event.data.outcome.answer, state),
      ...closeStep(state),
      { type: 'RUN_FINISHED', threadId: state.threadId, runId: state.runId, outcome: { type: 'success' }, result: event.data.outcome },
    ],
  },
  'run.failed': {
    becomes: 'aborted: STEP_FINISHED, STATE_SNAPSHOT, RUN_FINISHED (outcome cancelled); otherwise RUN_ERROR (code and message of the outcome\'s error)',
    map: (event, state) => {
      const closing = [...endDraft(state), ...closeStep(state)];
      const { reason, error } = event.data.outcome;
      if (reason === 'aborted') return [...closing, { type: 'RUN_FINISHED', threadId: state.threadId, runId: state.runId, outcome: { type: 'cancelled' } }];
      return [...closing, { type: 'RUN_ERROR', code: error?.code ?? 'RUN_FAILED', message: error?.message ?? `the run ended blocked (${reason})` }];
    },
  },
};

/**
 * What is not an event of the log, in the same table's words: the pieces of the answers (live
 * only) and the wait a run parks in (which ends the AG-UI run).
 */
export const AGUI_OTHER_MAP = {
  chunk:
    'TEXT_MESSAGE_START (messageId "<traceId>:<iteration>:<attempt>", role assistant) at the first piece, TEXT_MESSAGE_CONTENT per piece; a retry starts a new message',
  finalAnswer:
    'the streamed message ends with the answer\'s message when its text leads to it (the rest is sent first); otherwise it ends and one more message ("<traceId>:answer") carries the answer',
  approval: 'RUN_FINISHED, outcome interrupt: id and toolCallId the call\'s idempotency key, reason "tool_approval", expiresAt the deadline',
  human: 'RUN_FINISHED, outcome interrupt: id the question\'s key, reason "escalate" or "request_info", message the question',
  client: 'RUN_FINISHED, outcome success with pendingToolCallIds: [the call\'s idempotency key] (a frontend tool call)',
} as const;

/** Options of {@link createAguiMapper}. */
export interface AguiMapperOptions {
  readonly traceId: string;
  readonly threadId: string;
  readonly runId: string;
  /** The events up to this seq are the client's already: they are folded into the state, not sent. */
  readonly afterSeq?: number;
}

/** Turns one run's events, pieces and wait into AG-UI events, in order (see {@link AGUI_EVENT_MAP}). */
export interface AguiMapper {
  /** `RUN_STARTED` (with the trace id in `metadata.redflow.traceId`). */
  start(): AguiEvent[];
  /** The AG-UI events of one logged event; give every event of the run from its first, in order. */
  event(event: AgentEvent): AguiEvent[];
  /** The AG-UI events of one piece of an answer as the model streams it. */
  chunk(chunk: Pick<RunChunk, 'iteration' | 'attempt' | 'text'>): AguiEvent[];
  /** Ends the AG-UI run at the wait the run parked in: an interrupt, or a frontend tool call to answer. */
  waiting(wait: RunWait): AguiEvent[];
}

/**
 * A new {@link AguiMapper} for one stream of one run.
 *
 * @example
 * ```ts
 * const mapper = createAguiMapper({ traceId, threadId: 'thread-1', runId: 'run-1' });
 * const out = [...mapper.start(), ...events.flatMap((event) => mapper.event(event))];
 * ```
 */
export function createAguiMapper(options: AguiMapperOptions): AguiMapper {
  const afterSeq = options.afterSeq ?? 0;
  const state: MapState = { traceId: options.traceId, threadId: options.threadId, runId: options.runId, envelope: emptyEnvelope(options.traceId), answered: 0 };
  let resumedShown = afterSeq === 0;
  /** The highest iteration whose model request the log has shown: a piece of a later one waits for it. */
  let requested = 0;
  /** Pieces that came (live) before the follow of the log reached their model request. */
  let held: Pick<RunChunk, 'iteration' | 'attempt' | 'text'>[] = [];
  const mapChunk = ({ iteration, attempt, text }: Pick<RunChunk, 'iteration' | 'attempt' | 'text'>): AguiEvent[] => {
    if (iteration <= state.answered || text === '') return [];
    const out: AguiEvent[] = [];
    if (state.draft !== undefined && (state.draft.iteration !== iteration || state.draft.attempt !== attempt)) out.push(...endDraft(state));
    if (state.draft === undefined) {
      state.draft = { id: `${state.traceId}:${iteration}:${attempt}`, iteration, attempt, text: '' };
      out.push({ type: 'TEXT_MESSAGE_START', messageId: state.draft.id, role: 'assistant' });
    }
    state.draft.text += text;
    out.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: state.draft.id, delta: text });
    return out;
  };
  const release = (): AguiEvent[] => {
    const due = held.filter((chunk) => chunk.iteration <= requested);
    held = held.filter((chunk) => chunk.iteration > requested);
    return due.flatMap(mapChunk);
  };
  return {
    start: () => [{ type: 'RUN_STARTED', threadId: state.threadId, runId: state.runId, metadata: { redflow: { traceId: state.traceId } } }],
    event(event) {
      const before = state.envelope;
      state.envelope = evolve(state.envelope, event);
      if (event.type === 'model.requested') requested = Math.max(requested, event.iteration);
      if (event.seq <= afterSeq) {
        if (event.type === 'model.answered') state.answered = Math.max(state.answered, event.iteration);
        held = held.filter((chunk) => chunk.iteration > state.answered);
        return [];
      }
      // A stream that starts mid-run first shows the state the client's cursor left it in.
      const out: AguiEvent[] = resumedShown ? [] : [{ type: 'STATE_SNAPSHOT', snapshot: before }];
      resumedShown = true;
      if (event.iteration >= 1) out.push(...openStep(event.iteration, state));
      const row = AGUI_EVENT_MAP[event.type] as Row<AgentEventType>;
      out.push(...row.map(event, state));
      if (event.type === 'model.requested') out.push(...release());
      return out;
    },
    chunk(chunk) {
      if (chunk.iteration > requested) {
        held.push(chunk);
        return [];
      }
      return mapChunk(chunk);
    },
    waiting(wait) {
      const out = [...endDraft(state), ...closeStep(state)];
      const finished = { type: 'RUN_FINISHED', threadId: state.threadId, runId: state.runId };
      if (wait.kind === 'client') return [...out, { ...finished, outcome: { type: 'success', pendingToolCallIds: [wait.idempotencyKey] } }];
      const interrupt =
        wait.kind === 'approval'
          ? {
              id: wait.idempotencyKey,
              reason: 'tool_approval',
              toolCallId: wait.idempotencyKey,
              message: `the call of ${wait.tool} waits for a person's approval`,
              responseSchema: APPROVAL_SCHEMA,
            }
          : { id: wait.idempotencyKey, reason: wait.question?.action ?? 'request_info', message: wait.question?.question ?? '', responseSchema: HUMAN_SCHEMA };
      return [...out, { ...finished, outcome: { type: 'interrupt', interrupts: [{ ...interrupt, expiresAt: wait.deadline, metadata: { redflow: { traceId: state.traceId, tool: wait.tool, input: wait.input } } }] } }];
    },
  };
}

/** What an approval interrupt's resume payload is (a bare boolean is taken too). */
const APPROVAL_SCHEMA = { type: 'object', required: ['approved'], properties: { approved: { type: 'boolean' }, reason: { type: 'string' } } };
/** What a question's resume payload is (a bare string is taken too). */
const HUMAN_SCHEMA = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };

function snapshot(state: MapState): AguiEvent {
  return { type: 'STATE_SNAPSHOT', snapshot: state.envelope };
}

function openStep(iteration: number, state: MapState): AguiEvent[] {
  if (state.step === iteration) return [];
  const out = closeStep(state);
  state.step = iteration;
  out.push({ type: 'STEP_STARTED', stepName: `iteration ${iteration}` });
  return out;
}

function closeStep(state: MapState): AguiEvent[] {
  if (state.step === undefined) return [];
  const out: AguiEvent[] = [{ type: 'STEP_FINISHED', stepName: `iteration ${state.step}` }, snapshot(state)];
  state.step = undefined;
  return out;
}

function endDraft(state: MapState): AguiEvent[] {
  if (state.draft === undefined) return [];
  const id = state.draft.id;
  state.draft = undefined;
  return [{ type: 'TEXT_MESSAGE_END', messageId: id }];
}

/** The final answer's message: the streamed one when its text leads to it, else a message of its own. */
function answerMessage(answer: string | undefined, state: MapState): AguiEvent[] {
  const draft = state.draft;
  if (answer === undefined || answer === '') return endDraft(state);
  if (draft !== undefined && answer.startsWith(draft.text)) {
    const rest = answer.slice(draft.text.length);
    return [...(rest === '' ? [] : [{ type: 'TEXT_MESSAGE_CONTENT', messageId: draft.id, delta: rest }]), ...endDraft(state)];
  }
  const id = `${state.traceId}:answer`;
  return [
    ...endDraft(state),
    { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: answer },
    { type: 'TEXT_MESSAGE_END', messageId: id },
  ];
}

function toolResult(toolCallId: string, content: string): AguiEvent {
  return { type: 'TOOL_CALL_RESULT', messageId: `${toolCallId}:result`, toolCallId, role: 'tool', content };
}

function json(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}
