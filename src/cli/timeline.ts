import type { IterationStep, RunOutcome, TokenUsage } from '../contracts/schema-types.js';
import { styles } from './output.js';

/**
 * One timeline line: `#2  tool   lookup_order  conf 0.80     12 ms  tokens 120 in / 18 out`; the
 * tokens are the iteration's model call, when the model reported them. A tool call that failed ends
 * with its error's code, `✖ TOOL_FAILED`, so it never reads like a success; so does the `error`
 * line of a run that ended during a tool call (`#2  error  lookup_order … ✖ RUN_TIMEOUT`), which
 * keeps the tool's name. Any other `error` line names its code in the tool's place. A `final`
 * answer sent back (its output did not match the schema, or it failed its verification) ends with
 * the code too (`✖ VERIFICATION_FAILED`): the model answered again.
 */
export function formatStep(step: IterationStep, color: boolean, usage?: TokenUsage): string {
  const s = styles(color);
  const action =
    step.action === 'error' ? s.red('error') : step.action === 'final' ? s.green('final') : step.action === 'tool' ? s.cyan('tool ') : s.dim(step.action);
  const inTool = step.action === 'error' && step.tool !== undefined;
  const what = step.action === 'error' && !inTool ? (step.code ?? '') : (step.tool ?? '');
  const confidence = step.confidence === undefined ? '         ' : `conf ${step.confidence.toFixed(2)}`;
  const duration = step.durationMs === undefined ? '' : `${Math.round(step.durationMs)} ms`;
  const tokens = usage === undefined ? '' : `  ${s.dim(formatTokens(usage))}`;
  const failed = (step.action === 'tool' || step.action === 'final' || inTool) && step.code !== undefined ? `  ${s.red(`✖ ${step.code}`)}` : '';
  return `  #${step.iteration}  ${action.padEnd(color ? 14 : 5)}  ${what.padEnd(22)}  ${confidence}  ${duration.padStart(8)}${tokens}${failed}`;
}

/**
 * Token usage in words: `tokens 120 in / 18 out` (prompt, then completion); `tokens ≈120 in / ≈18
 * out` when counted by the tokenizer (the provider reported none), then `$0.000025` when priced.
 */
export function formatTokens(usage: TokenUsage): string {
  const about = usage.estimated === true ? '≈' : '';
  return `tokens ${about}${usage.promptTokens} in / ${about}${usage.completionTokens} out${formatCost(usage)}`;
}

/** ` $0.000123` for a priced usage (budgeted runs), else nothing. */
function formatCost(usage: TokenUsage): string {
  return usage.costUsd === undefined ? '' : ` $${Number(usage.costUsd.toPrecision(3))}`;
}

/** The sum of token usages. */
export function sumTokens(usages: Iterable<TokenUsage>): TokenUsage {
  const total: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (const usage of usages) {
    total.promptTokens += usage.promptTokens;
    total.completionTokens += usage.completionTokens;
    total.totalTokens += usage.totalTokens;
    if (usage.estimated === true) total.estimated = true;
    if (usage.costUsd !== undefined) total.costUsd = (total.costUsd ?? 0) + usage.costUsd;
  }
  return total;
}

/** The line under a timeline with the tokens of all its model calls: `  total  tokens 270 in / 25 out (295) over 2 model calls`. */
export function formatTokenTotal(total: TokenUsage, calls: number): string {
  return `  total  ${formatTokens(total)} (${total.totalTokens}) over ${calls === 1 ? '1 model call' : `${calls} model calls`}`;
}

/** How the run ended, in words. */
export function formatOutcome(outcome: RunOutcome, color: boolean): string {
  const s = styles(color);
  const label =
    outcome.status === 'done'
      ? s.green('done')
      : outcome.status === 'done_partial'
        ? s.yellow('done_partial')
        : outcome.status === 'escalate' || outcome.status === 'delegate'
          ? s.yellow(outcome.status)
          : s.red('blocked');
  const error = outcome.error ? ` ${outcome.error.code}: ${outcome.error.message}` : '';
  const hint = outcome.error?.hint ? `\n  hint: ${outcome.error.hint}` : '';
  const detail = outcome.detail ? `: ${outcome.detail}` : '';
  const handoff = outcome.handoff ? `: handed to agent ${outcome.handoff.agentId}\n  task: ${outcome.handoff.task}` : '';
  const question = outcome.question ? `\n  question: ${outcome.question.question}${outcome.question.reason === undefined ? '' : `\n  reason: ${outcome.question.reason}`}` : '';
  const output = outcome.validated === false ? `\n  output does not match the outputSchema: ${(outcome.outputErrors ?? []).join('; ')}` : '';
  return `${label} (${outcome.reason})${detail}${handoff}${error}${hint}${question}${output}`;
}
