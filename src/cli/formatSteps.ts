import type { ErrorInfoData, Exchange, RunOutcome } from '../contracts/schema-types.js';
import type { AnswerVerdict, IterationDetails, RunDetails } from '../machines/stepDetails.js';
import { formatOutcome } from './timeline.js';
import { styles } from './output.js';

/** Longest text `replay --steps` prints before cutting it (`--full` prints all of it). */
export const STEP_TEXT_LIMIT = 600;

/** How to print the steps: colour, and whether long texts are printed whole. */
export interface StepFormat {
  readonly color: boolean;
  readonly full: boolean;
}

/**
 * A run's iterations in detail, as lines for `redflow replay --steps`: the input, the system
 * prompt once, then for each iteration the messages after the system prompt, the model's answer
 * and the verdict on it, the tool's input and result, and at the end the memory step and the
 * outcome. A failed step is marked with ✖ and its error's code.
 */
export function formatSteps(details: RunDetails, format: StepFormat): string[] {
  const s = styles(format.color);
  const cut = (text: string) => cutText(text, format.full);
  const lines: string[] = [];
  if (details.parent) {
    const { parent } = details;
    lines.push(s.dim(`subagent run of ${parent.traceId}: its call of ${parent.tool} in iteration ${parent.iteration} (key ${parent.idempotencyKey})`));
  }
  lines.push(`input: ${cut(json(details.input))}`);
  if (details.resumedAfter.length > 0) lines.push(s.dim(`resumed after seq ${details.resumedAfter.join(', ')}`));
  if (details.systemPrompt !== null) {
    lines.push('', s.bold(`system prompt (${details.systemPrompt.length} characters, sent first in every model call):`));
    lines.push(...indent(cut(details.systemPrompt), 2));
  }
  for (const it of details.iterations) lines.push('', ...formatIteration(it, format));
  if (details.memory) {
    const { memory } = details;
    const saved = memory.savedInMs === null ? s.yellow('not saved yet') : `saved in ${ms(memory.savedInMs)}`;
    lines.push('', s.bold('memory'), `  turn added to conversation ${memory.conversationId} (keeps ${memory.maxTurns} turns): ${saved}`);
  }
  lines.push('');
  if (details.ending) {
    lines.push(`outcome: ${formatOutcome(details.ending.outcome, format.color)}`);
    if (details.ending.outcome.answer !== undefined) lines.push(`answer: ${cut(details.ending.outcome.answer)}`);
    if (details.ending.confidence !== undefined) lines.push(`confidence: ${details.ending.confidence.toFixed(2)}`);
    if (details.ending.thought !== undefined) lines.push(`thought: ${cut(details.ending.thought)}`);
  } else {
    lines.push(s.yellow('outcome: none yet (the log stops before the run ended)'));
  }
  return lines;
}

function formatIteration(it: IterationDetails, format: StepFormat): string[] {
  const s = styles(format.color);
  const cut = (text: string) => cutText(text, format.full);
  const mark = it.failure ? s.red(`  ✖ ${it.failure.error?.code ?? 'failed'}`) : '';
  const lines = [s.bold(`── #${it.iteration} ──`) + mark];
  lines.push('  messages after the system prompt:');
  for (const message of it.messages) {
    const [first = '', ...rest] = cut(message.content).split('\n');
    lines.push(`    ${s.cyan(message.role)}: ${first}`, ...rest.map((text) => `      ${text}`));
  }
  const { model } = it;
  if (!model) {
    lines.push(it.failure?.step === 'model' ? s.red(`  model: ✖ ${errorText(it.failure.error)}`) : s.yellow('  model: no answer logged'));
  } else {
    const facts = [ms(model.durationMs)];
    if (model.attempts !== null) facts.push(`${model.attempts} attempt${model.attempts === 1 ? '' : 's'}`);
    if (model.usage) facts.push(`tokens ${model.usage.promptTokens} in, ${model.usage.completionTokens} out`);
    if (model.originalLength !== null) facts.push(`cut from ${model.originalLength} characters`);
    if (model.thoughtHidden) facts.push('its thought taken out of the log (debug off)');
    if (model.switchedModel !== null) lines.push(s.yellow(`  ${model.switchedModel}`));
    lines.push(`  model answered (${facts.join(', ')}):`, ...indent(cut(model.text), 4));
    // The logged text is the answer without its thought; this was the verdict on the answer as received.
    if (model.rejection) lines.push(s.red(`  verdict on the answer as received: ✖ ${errorText(model.rejection)}`));
    lines.push(`  verdict: ${verdictText(model.verdict, format.color)}`);
  }
  const { tool } = it;
  if (tool) {
    lines.push(`  tool ${s.cyan(tool.tool)}  conf ${tool.confidence.toFixed(2)}  key ${tool.idempotencyKey}`);
    if (tool.message !== null) lines.push(`    message: ${cut(tool.message)}`);
    if (tool.thought !== null) lines.push(`    thought: ${cut(tool.thought)}`);
    lines.push(`    input: ${cut(json(tool.input))}`);
    if (tool.childTraceId !== null) lines.push(`    subagent run: ${s.cyan(tool.childTraceId)}  (replay --tree shows the runs under this one)`);
    if (tool.approval) {
      const reason = tool.approval.reason === null ? '' : `: ${cut(tool.approval.reason)}`;
      lines.push(tool.approval.decision === 'approved' ? `    approved${reason}` : s.red(`    denied${reason}`));
    }
    const { result } = tool;
    if (!result && it.failure?.step === 'tool') lines.push(s.red(`    ✖ the run ended during the call: ${errorText(it.failure.error)}`));
    else if (!result && tool.waiting) lines.push(s.yellow(`    waiting for ${tool.waiting === 'approval' ? 'an approval' : 'its client to run it'} (the log stops here)`));
    else if (!result) lines.push(s.yellow('    no result logged (the call is unfinished)'));
    else if (result.ok) lines.push(`    output (${ms(result.durationMs)}): ${cut(json(result.output))}`);
    else lines.push(s.red(`    ✖ error (${ms(result.durationMs)}): ${errorText(result.error)}`));
  }
  const { exchange } = it;
  if (exchange?.kind === 'output_repair') {
    lines.push(s.yellow(`  output sent back for repair: ${cut((exchange.errors ?? []).join('; '))}`));
  } else if (exchange?.kind === 'verification') {
    lines.push(...verificationLines(exchange, format.color, cut));
  } else if (exchange?.kind === 'answer_repair') {
    lines.push(s.yellow('  answer sent back to the model with its error (onInvalidAnswer): it answers again next iteration'));
  } else if (exchange) {
    lines.push(`  ${exchange.kind} ${s.cyan(cut(exchange.question ?? ''))}${exchange.reason === undefined ? '' : `  (reason: ${cut(exchange.reason)})`}`);
    lines.push(exchange.answer === undefined ? s.yellow('    waiting for a person to answer (the log stops here)') : `    answered: ${cut(exchange.answer)}`);
  }
  if (it.failure?.step === 'ending') lines.push(s.red(`  ✖ the run ended after this iteration: ${errorText(it.failure.error)}`));
  if (it.failure?.step === 'memory') lines.push(s.red(`  ✖ the run ended while saving its turn to memory: ${errorText(it.failure.error)}`));
  return lines;
}

function verdictText(verdict: AnswerVerdict, color: boolean): string {
  const s = styles(color);
  switch (verdict.kind) {
    case 'tool':
      return s.green(`valid tool call (${verdict.tool})`);
    case 'final':
      return s.green('final answer');
    case 'ask':
      return s.yellow(`a question for a person (${verdict.action})`);
    case 'repair':
      return s.yellow('final output sent back: it does not match the outputSchema');
    case 'delegate':
      return s.yellow(`handed to agent ${verdict.agentId} (delegate)`);
    case 'rejected':
      if ('repaired' in verdict) return s.yellow(`✖ rejected, sent back for repair (onInvalidAnswer): ${errorText(verdict.error)}`);
      return s.red(`✖ rejected: ${errorText(verdict.error)}`);
    case 'ended':
      return s.yellow(`the run ended (${verdict.reason satisfies RunOutcome['reason']})`);
    case 'pending':
      return s.yellow('none logged (the log stops here)');
  }
}

function errorText(error: ErrorInfoData | null): string {
  if (!error) return 'no error logged';
  return `${error.code}: ${error.message}${error.hint ? `\n      hint: ${error.hint}` : ''}`;
}

/** `text`, cut at {@link STEP_TEXT_LIMIT} with a marker saying how much is left out, unless `full`. */
export function cutText(text: string, full: boolean): string {
  if (full || text.length <= STEP_TEXT_LIMIT) return text;
  return `${text.slice(0, STEP_TEXT_LIMIT)}[… ${text.length - STEP_TEXT_LIMIT} more characters; --full shows them]`;
}

const json = (value: unknown) => JSON.stringify(value) ?? 'null';
const ms = (value: number) => `${Math.round(value)} ms`;
const indent = (text: string, by: number) => text.split('\n').map((part) => `${' '.repeat(by)}${part}`);

/** The verification of a final answer: each check with its basis, or that the verifier is still being asked. */
function verificationLines(exchange: Exchange, color: boolean, cut: (text: string) => string): string[] {
  const s = styles(color);
  if (exchange.status === 'waiting') return [s.yellow('  verification: asking the verifier (the log stops here)')];
  if (exchange.error !== undefined) return [s.yellow(`  ✖ verification could not be read: ${errorText(exchange.error)}; the model revises its answer`)];
  const checks = exchange.checks ?? [];
  const passed = checks.every((check) => check.passed);
  const head = passed ? s.green('  verification passed') : s.yellow('  ✖ verification failed: the model revises its answer');
  return [head, ...checks.map((check) => `    ${check.passed ? s.green('✔') : s.red('✖')} ${check.name}: ${cut(check.basis)}`)];
}
