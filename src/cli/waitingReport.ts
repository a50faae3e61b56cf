import path from 'node:path';
import type { AgentEnvelope } from '../contracts/schema-types.js';
import type { RunWait } from '../events/pendingWait.js';
import { waitingMessage } from '../runtime/runWaitingError.js';
import { ExitCode } from './exitCodes.js';
import { line, styles, type Output } from './output.js';

/** A run that waits, as the CLI reports it. */
export interface WaitingRun {
  readonly traceId: string;
  readonly wait: RunWait;
  readonly envelope?: AgentEnvelope;
}

/**
 * Shows a run that waits for an answer from outside and holds no process (exit code 3): what it
 * waits for, until when, and the commands that answer it. `answerWith` is how those commands name
 * the run: its log file, or `<traceId> --nats <url>`. With `json`, one object on stdout:
 * `{ traceId, waiting, envelope, log? }`.
 */
export function reportWaiting(run: WaitingRun, answerWith: { readonly log: string } | { readonly cluster: true }, json: boolean, output: Output): ExitCode {
  const { wait, traceId } = run;
  if (json) {
    const log = 'log' in answerWith ? { log: answerWith.log } : {};
    line(output.out, JSON.stringify({ traceId, waiting: wait, envelope: run.envelope ?? null, ...log }, null, 2));
    return ExitCode.Waiting;
  }
  const s = styles(output.color);
  const target = 'log' in answerWith ? path.relative(process.cwd(), answerWith.log) || answerWith.log : `${traceId} --nats <url>`;
  line(output.err, s.yellow(`waiting: ${waitingMessage(traceId, wait)}`));
  if (wait.kind === 'human') {
    const { question } = wait;
    if (question?.reason !== undefined) line(output.err, `  reason:  ${question.reason}`);
    if (question?.context !== undefined) line(output.err, `  context: ${JSON.stringify(question.context)}`);
    line(output.err, `  answer:  redflow answer ${target} --text <answer>`);
    line(output.err, s.dim(`  the run is parked in its log: nothing runs until the answer comes; past ${wait.deadline} it ends escalate with the question`));
    return ExitCode.Waiting;
  }
  line(output.err, `  input: ${JSON.stringify(wait.input)}`);
  if (wait.kind === 'approval') {
    line(output.err, `  approve: redflow approve ${target} [--reason <text>]`);
    line(output.err, `  deny:    redflow deny ${target} --reason <text>`);
  } else {
    line(output.err, `  answer:  redflow tool-result ${target} --output <json>   (or --error <message>)`);
  }
  line(output.err, s.dim(`  the run is parked in its log: nothing runs until the answer comes; past ${wait.deadline} it ends blocked (WAIT_EXPIRED)`));
  return ExitCode.Waiting;
}
