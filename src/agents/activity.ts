import { RedflowError, type ErrorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { RunChunk, RunToolUpdate } from '../runtime/serveActors.js';

/** A tool call as the activity shows it: its id is the call's idempotency key. */
export interface ActivityToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/**
 * What a run is doing, as it happens, for a live view. In order, per turn (one iteration: a
 * model call and at most one tool call): `turn_start`, the answer's text in `content_chunk`s as the
 * model streams it (a final answer's message; nothing of a tool call), `thinking` (the thought the model gave, when the agent is in debug, else the message
 * it gave with a tool call), `tool_call_start`, the call's `tool_progress` as the tool reports it
 * (an MCP server's progress notifications, a remote A2A task's status and artifact updates) and
 * `tool_call_end`, then `turn_end`; a run that ends
 * with an error ends with one `error`, after its last `turn_end`.
 *
 * Every event but the chunks and the progress is read off the run's log, so the activity of a run can be rebuilt
 * from its log (without the chunks, which the log does not keep: it has each answer once, whole).
 *
 * @example
 * ```ts
 * for await (const activity of await executor.start(agent, { inputs })) {
 *   if (activity.type === 'content_chunk') process.stdout.write(activity.content);
 *   if (activity.type === 'tool_call_start') console.log('calls', activity.toolCall.name);
 * }
 * ```
 */
export type AgentActivityEvent =
  | { readonly type: 'turn_start'; readonly turnNumber: number }
  | { readonly type: 'thinking'; readonly turnNumber: number; readonly content: string }
  | { readonly type: 'tool_call_start'; readonly turnNumber: number; readonly toolCall: ActivityToolCall }
  | {
      readonly type: 'tool_call_end';
      readonly turnNumber: number;
      readonly toolCallId: string;
      /** The tool's output as JSON, or its error's message (`ok` false). */
      readonly result: string;
      readonly ok: boolean;
    }
  | {
      readonly type: 'content_chunk';
      readonly turnNumber: number;
      /** The next piece of the answer's text as the model streams it: a final answer's message (never the JSON around it), or an answer that is not JSON as written. */
      readonly content: string;
      /** The model call's attempt: when a retry starts, the pieces of the attempt before it are void. */
      readonly attempt: number;
    }
  | {
      readonly type: 'tool_progress';
      readonly turnNumber: number;
      readonly toolCallId: string;
      /** How far the call is, as the tool counts (an MCP `progress`), when it says. */
      readonly progress?: number;
      /** Out of how much, when the tool knows. */
      readonly total?: number;
      /** What the tool says it is doing (an MCP progress message, a remote A2A task's status or new artifact). */
      readonly message?: string;
    }
  | { readonly type: 'turn_end'; readonly turnNumber: number }
  | { readonly type: 'error'; readonly error: RedflowError };

/** One of {@link AgentActivityEvent}'s `type`s. */
export type AgentActivityType = AgentActivityEvent['type'];

/** Turns a run's events and its answers' pieces into its {@link AgentActivityEvent}s, in order. */
export interface ActivityDeriver {
  /** The activity one logged event makes (none for most). Give every event of the run, in order. */
  event(event: AgentEvent): AgentActivityEvent[];
  /**
   * The activity of one piece of an answer: a `content_chunk` while its turn waits for the model's
   * answer, nothing once the answer is in the log (a piece arriving late, over the network). Of a
   * tool call's word (what the run's live subject also carries): a `tool_progress` while that call
   * is open, nothing otherwise (where its work lives is for the log, not the view).
   */
  chunk(chunk: Pick<RunChunk, 'iteration' | 'attempt' | 'text'> | Pick<RunToolUpdate, 'iteration' | 'toolCallId' | 'progress'>): AgentActivityEvent[];
}

/** The text of a tool's output: JSON, kept short enough for a live view. */
function resultText(output: unknown): string {
  if (typeof output === 'string') return output;
  return JSON.stringify(output) ?? 'null';
}

/** The fields of a progress report that are what they say (a tool's word, from another process). */
function progressOf(report: NonNullable<RunToolUpdate['progress']>): { progress?: number; total?: number; message?: string } {
  const out: { progress?: number; total?: number; message?: string } = {};
  if (typeof report.progress === 'number' && Number.isFinite(report.progress)) out.progress = report.progress;
  if (typeof report.total === 'number' && Number.isFinite(report.total)) out.total = report.total;
  if (typeof report.message === 'string' && report.message !== '') out.message = report.message.slice(0, 500);
  return out;
}

/**
 * A new {@link ActivityDeriver}. It opens a turn at the first sign of it (the model's request, or on
 * a resumed run whatever comes first of that iteration), so the activity of a run resumed mid-turn
 * still starts its turn; every tool call started gets its end, even when the run ends during the
 * call (with the run's error as its result).
 *
 * @example
 * ```ts
 * const activity = createActivityDeriver();
 * for (const event of events) for (const a of activity.event(event)) console.log(a.type);
 * ```
 */
export function createActivityDeriver(): ActivityDeriver {
  let turn: number | undefined;
  /** The highest turn opened so far: an event or piece of an earlier one is late. */
  let lastTurn = 0;
  let answered = false;
  let openCall: string | undefined;

  const open = (iteration: number, out: AgentActivityEvent[]): boolean => {
    if (turn === iteration) return true;
    // Nothing reopens a turn that is over, or opens one before it.
    if (iteration < 1 || iteration <= lastTurn) return false;
    close(out);
    turn = iteration;
    lastTurn = iteration;
    answered = false;
    out.push({ type: 'turn_start', turnNumber: iteration });
    return true;
  };
  const endCall = (result: string, ok: boolean, out: AgentActivityEvent[]) => {
    if (openCall === undefined || turn === undefined) return;
    out.push({ type: 'tool_call_end', turnNumber: turn, toolCallId: openCall, result, ok });
    openCall = undefined;
  };
  const close = (out: AgentActivityEvent[], ending?: ErrorInfo) => {
    if (turn === undefined) return;
    endCall(ending ? `${ending.code}: ${ending.message}` : 'the run ended during the call', false, out);
    out.push({ type: 'turn_end', turnNumber: turn });
    turn = undefined;
  };
  const think = (content: string | undefined, out: AgentActivityEvent[]) => {
    if (turn !== undefined && content !== undefined && content.trim() !== '') out.push({ type: 'thinking', turnNumber: turn, content });
  };

  return {
    event(event) {
      const out: AgentActivityEvent[] = [];
      switch (event.type) {
        case 'model.requested':
          open(event.iteration, out);
          break;
        case 'model.answered':
          if (open(event.iteration, out)) answered = true;
          break;
        case 'tool.requested':
          if (!open(event.iteration, out)) break;
          answered = true;
          think(event.data.thought ?? event.data.message, out);
          openCall = event.data.idempotencyKey;
          out.push({ type: 'tool_call_start', turnNumber: event.iteration, toolCall: { id: openCall, name: event.data.tool, input: event.data.input } });
          break;
        case 'tool.denied':
          if (!open(event.iteration, out)) break;
          openCall ??= event.data.idempotencyKey;
          endCall(`${event.data.error.code}: ${event.data.error.message}`, false, out);
          close(out);
          break;
        case 'tool.completed': {
          if (!open(event.iteration, out)) break;
          openCall ??= event.data.idempotencyKey;
          const { ok, output, error } = event.data;
          endCall(ok ? resultText(output) : `${error?.code ?? 'TOOL_FAILED'}: ${error?.message ?? 'the tool failed'}`, ok, out);
          close(out);
          break;
        }
        case 'run.completed':
        case 'run.failed': {
          think(event.data.thought, out);
          // The log's error data carries a code Redflow wrote: one of ErrorCode's.
          const error = event.data.outcome.error as ErrorInfo | undefined;
          close(out, error);
          if (error) out.push({ type: 'error', error: new RedflowError(error) });
          break;
        }
        default:
          break;
      }
      return out;
    },
    chunk(message) {
      const out: AgentActivityEvent[] = [];
      if ('toolCallId' in message) {
        const { progress } = message;
        // Progress of a call that is over (or not begun here) comes too late to show.
        if (progress === undefined || message.iteration !== turn || message.toolCallId !== openCall) return out;
        out.push({ type: 'tool_progress', turnNumber: turn, toolCallId: openCall, ...progressOf(progress) });
        return out;
      }
      const { iteration, attempt, text } = message;
      // A piece of an answer already in the log, or of a turn already over, comes too late to show.
      if (iteration === turn && answered) return out;
      if (!open(iteration, out)) return out;
      out.push({ type: 'content_chunk', turnNumber: iteration, content: text, attempt });
      return out;
    },
  };
}

/** An activity event as JSON data (for a stream or a message): an `error`'s error as its coded data. */
export type AgentActivityData = Exclude<AgentActivityEvent, { type: 'error' }> | { readonly type: 'error'; readonly error: ErrorInfo };

/**
 * `activity` as plain data, what the run stream sends (`?activity=1`).
 *
 * @example
 * ```ts
 * JSON.stringify(activityAsData({ type: 'error', error })); // '{"type":"error","error":{"code":"RUN_TIMEOUT",…}}'
 * ```
 */
export function activityAsData(activity: AgentActivityEvent): AgentActivityData {
  return activity.type === 'error' ? { type: 'error', error: activity.error.toInfo() } : activity;
}

/**
 * The activity a log holds: every event but the pieces of the answers, which the log does not
 * keep. What a run's live activity was, less its `content_chunk`s.
 *
 * @example
 * ```ts
 * const { events } = await readJsonlLog('.redflow/runs/abc.jsonl');
 * activityOfLog(events).filter((a) => a.type === 'tool_call_start');
 * ```
 */
export function activityOfLog(events: readonly AgentEvent[]): AgentActivityEvent[] {
  const deriver = createActivityDeriver();
  return events.flatMap((event) => deriver.event(event));
}
