import type { AgentEnvelope, TokenUsage, WaitStart } from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { formatStep, formatTokenTotal, sumTokens } from './timeline.js';
import { styles, type Output } from './output.js';
import type { RunToolUpdate } from '../runtime/serveActors.js';

/**
 * How long a model call or a tool may work before a non-terminal output (a pipe, a CI log, which
 * cannot show the transient status line) is told what the run is waiting for.
 */
export const SLOW_STEP_NOTICE_MS = 1000;

/** How much of an answer being streamed the status line shows: its last characters. */
const STREAM_TAIL_CHARS = 60;

/**
 * Prints a run's iterations as they happen: one line per finished iteration (action, tool,
 * confidence, duration, the model call's tokens), and what is in progress: on a TTY a transient
 * status line while the model or a tool works, elsewhere a `… #2 running lookup_order` line once
 * it has worked for {@link SLOW_STEP_NOTICE_MS}. {@link done} adds the tokens of all model calls.
 */
export function createProgressPrinter(output: Output) {
  const s = styles(output.color);
  const tty = Boolean(output.err.isTTY);
  let envelope: AgentEnvelope | undefined;
  let transient = false;
  let slowNotice: NodeJS.Timeout | undefined;
  // Tokens per iteration (a retried or rejected answer adds to its iteration's), and the calls that reported them.
  const usageByIteration = new Map<number, TokenUsage>();
  let reportedCalls = 0;
  /** The end of the answer being streamed, for the status line. */
  let streamed: { iteration: number; attempt: number; text: string } | undefined;

  const clear = () => {
    if (slowNotice !== undefined) clearTimeout(slowNotice);
    slowNotice = undefined;
    if (transient) output.err.write('\r\u001b[2K');
    transient = false;
  };
  const status = (text: string) => {
    clear();
    if (!tty) {
      slowNotice = setTimeout(() => {
        slowNotice = undefined;
        output.err.write(s.dim(`  … ${text} (still in progress after ${SLOW_STEP_NOTICE_MS / 1000} s)\n`));
      }, SLOW_STEP_NOTICE_MS);
      // A notice never keeps the process alive.
      slowNotice.unref();
      return;
    }
    output.err.write(s.dim(`  ${text}…`));
    transient = true;
  };
  /** A wait is not work in progress: the run is parked until the answer comes, so it gets a line of its own. */
  const waiting = (iteration: number, kind: WaitStart['for'], tool: string) => {
    clear();
    const what = kind === 'approval' ? `waits for an approval of ${tool}` : kind === 'client' ? `waits for the result of ${tool}, which the client runs` : `waits for a person's answer: ${tool}`;
    output.err.write(s.yellow(`  #${iteration}  ${what}\n`));
  };
  const printLastStep = () => {
    const step = envelope?.observability.events.at(-1);
    if (!step) return;
    clear();
    output.err.write(`${formatStep(step, output.color, usageByIteration.get(step.iteration))}\n`);
  };
  const addUsage = (iteration: number, usage: TokenUsage) => {
    const before = usageByIteration.get(iteration);
    usageByIteration.set(iteration, before === undefined ? usage : sumTokens([before, usage]));
    reportedCalls += 1;
  };

  /** A tool's progress report: the status line says how far the call that runs is (a late report is dropped). */
  const toolProgress = ({ iteration, toolCallId, progress }: Pick<RunToolUpdate, 'iteration' | 'toolCallId' | 'progress'>) => {
    const call = envelope?.tools.history.at(-1);
    if (progress === undefined || call === undefined || call.idempotencyKey !== toolCallId || call.status !== 'requested') return;
    const count = typeof progress.progress !== 'number' ? '' : typeof progress.total === 'number' ? `${progress.progress}/${progress.total}` : `${progress.progress}`;
    const words = [count, typeof progress.message === 'string' ? progress.message.replace(/\s+/g, ' ').slice(0, STREAM_TAIL_CHARS) : ''].filter((part) => part !== '').join(' ');
    status(`#${iteration}  running ${call.tool}${words === '' ? '' : `: ${words}`}`);
  };

  return {
    /**
     * Takes the events a resumed run's log already holds, printing nothing: the lines of the
     * iteration it resumes in (a tool's result after a wait, a denial) then read as in the whole run.
     */
    resumeFrom(events: readonly AgentEvent[]) {
      for (const event of events) envelope = evolve(envelope ?? emptyEnvelope(event.traceId), event);
    },
    onEvent(event: AgentEvent) {
      envelope = evolve(envelope ?? emptyEnvelope(event.traceId), event);
      switch (event.type) {
        case AgentEventType.RunStarted:
          output.err.write(s.dim(`run ${event.traceId}\n`));
          break;
        case AgentEventType.RunResumed:
          output.err.write(s.dim(`run ${event.traceId} resumed after event ${event.data.afterSeq}\n`));
          break;
        case AgentEventType.RunForked:
          output.err.write(s.dim(`forked from run ${event.data.parent.traceId} at iteration ${event.data.atIteration} (after its event ${event.data.atSeq})\n`));
          break;
        case AgentEventType.ModelRequested:
          status(`#${event.iteration}  waiting for the model`);
          break;
        case AgentEventType.ModelAnswered:
          clear();
          if (event.data.usage) addUsage(event.iteration, event.data.usage);
          break;
        case AgentEventType.ToolRequested:
          if (event.data.wait) waiting(event.iteration, event.data.wait.for, event.data.tool);
          else status(`#${event.iteration}  running ${event.data.tool}`);
          break;
        case AgentEventType.ToolApproved:
          clear();
          output.err.write(s.dim(`  #${event.iteration}  ${event.data.tool} approved${event.data.reason === undefined ? '' : `: ${event.data.reason}`}\n`));
          if (event.data.wait) waiting(event.iteration, event.data.wait.for, event.data.tool);
          else status(`#${event.iteration}  running ${event.data.tool}`);
          break;
        case AgentEventType.HumanRequested:
          printLastStep();
          waiting(event.iteration, event.data.wait.for, JSON.stringify(event.data.question));
          break;
        case AgentEventType.HumanAnswered:
          output.err.write(s.dim(`  #${event.iteration}  a person answered\n`));
          break;
        case AgentEventType.OutputRejected:
        case AgentEventType.AnswerRejected:
          printLastStep();
          break;
        case AgentEventType.VerificationRequested:
          status(`#${event.iteration}  verifying the final answer`);
          break;
        case AgentEventType.VerificationCompleted:
          clear();
          if (!event.data.passed) printLastStep();
          break;
        case AgentEventType.MemoryRequested:
          status(`saving the turn in conversation ${event.data.conversationId}`);
          break;
        case AgentEventType.ToolCompleted:
        case AgentEventType.ToolDenied:
        case AgentEventType.RunFailed:
          // A failure always changes the timeline's last line (or adds one): show it.
          printLastStep();
          break;
        case AgentEventType.RunCompleted:
          // A stop condition ends the run after a tool iteration that is already printed.
          if (event.data.outcome.reason === 'final_answer' || event.data.outcome.reason === 'delegated') printLastStep();
          else clear();
          break;
        default:
          break;
      }
    },
    /**
     * A piece of the model's answer as it streams: on a terminal, the status line shows the end of
     * what the model has written so far (elsewhere nothing: the iteration's line follows anyway).
     */
    onChunk(message: { readonly iteration: number; readonly attempt: number; readonly text: string } | Pick<RunToolUpdate, 'iteration' | 'toolCallId' | 'progress'>) {
      if ('toolCallId' in message) return toolProgress(message);
      const chunk = message;
      if (!tty) return;
      if (streamed === undefined || streamed.iteration !== chunk.iteration || streamed.attempt !== chunk.attempt) streamed = { ...chunk, text: '' };
      streamed.text = (streamed.text + chunk.text).slice(-STREAM_TAIL_CHARS);
      status(`#${chunk.iteration}  the model writes: ${streamed.text.replace(/\s+/g, ' ').trimStart()}`);
    },
    /** Removes a transient line left behind, and prints the tokens of the run's model calls, when reported. */
    done() {
      clear();
      if (reportedCalls === 0) return;
      output.err.write(`${s.dim(formatTokenTotal(sumTokens(usageByIteration.values()), reportedCalls))}\n`);
    },
  };
}
