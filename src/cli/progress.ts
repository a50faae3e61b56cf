import type { AgentEnvelope } from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { emptyEnvelope, evolve } from '../events/evolve.js';
import { formatStep } from './timeline.js';
import { styles, type Output } from './output.js';

/**
 * Prints a run's iterations as they happen: one line per finished iteration (action, tool,
 * confidence, duration), and on a TTY a transient status line while the model or a tool works.
 */
export function createProgressPrinter(output: Output) {
  const s = styles(output.color);
  const tty = Boolean(output.err.isTTY);
  let envelope: AgentEnvelope | undefined;
  let transient = false;

  const clear = () => {
    if (transient) output.err.write('\r\u001b[2K');
    transient = false;
  };
  const status = (text: string) => {
    if (!tty) return;
    clear();
    output.err.write(s.dim(text));
    transient = true;
  };
  const printLastStep = () => {
    const step = envelope?.observability.events.at(-1);
    if (!step) return;
    clear();
    output.err.write(`${formatStep(step, output.color)}\n`);
  };

  return {
    onEvent(event: AgentEvent) {
      envelope = evolve(envelope ?? emptyEnvelope(event.traceId), event);
      switch (event.type) {
        case AgentEventType.RunStarted:
          output.err.write(s.dim(`run ${event.traceId}\n`));
          break;
        case AgentEventType.RunResumed:
          output.err.write(s.dim(`run ${event.traceId} resumed after event ${event.data.afterSeq}\n`));
          break;
        case AgentEventType.ModelRequested:
          status(`  #${event.iteration}  waiting for the model…`);
          break;
        case AgentEventType.ToolRequested:
          status(`  #${event.iteration}  running ${event.data.tool}…`);
          break;
        case AgentEventType.MemoryRequested:
          status(`  saving the turn in conversation ${event.data.conversationId}…`);
          break;
        case AgentEventType.ToolCompleted:
        case AgentEventType.RunFailed:
          // A failure always changes the timeline's last line (or adds one): show it.
          printLastStep();
          break;
        case AgentEventType.RunCompleted:
          // A stop condition ends the run after a tool iteration that is already printed.
          if (event.data.outcome.reason === 'final_answer') printLastStep();
          else clear();
          break;
        default:
          break;
      }
    },
    /** Removes a transient line left behind. */
    done: clear,
  };
}
