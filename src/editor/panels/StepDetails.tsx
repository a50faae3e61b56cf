/**
 * One iteration of a run in detail, shown under the Runtime tab's timeline when its row is
 * clicked: the run's input, the messages the model was sent (system prompt folded), its raw answer
 * and what the core made of it, the tool's input and output or error, durations and tokens.
 * Built from the run's events (`runDetails`, the same reading as `redflow replay --steps`).
 */
import { useState } from 'react';
import type { ErrorInfoData } from '../../contracts/schema-types.js';
import type { AnswerVerdict, IterationDetails, ModelCallDetails, RunDetails, ToolCallDetails } from '../../events/stepDetails.js';

/** Longer texts are cut to this many characters until "show all" is clicked. */
const CUT_AT = 600;

/** The step details' props. */
export interface StepDetailsProps {
  readonly details: RunDetails;
  /** The iteration shown; its details come from `details.iterations` (the last with that number, after a resume). */
  readonly iteration: number;
  readonly onClose: () => void;
}

function json(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));
}

/** A monospace block, cut at {@link CUT_AT} characters with a "show all" button. */
function LongText({ text, testId }: { text: string; testId?: string }) {
  const [whole, setWhole] = useState(false);
  const cut = !whole && text.length > CUT_AT;
  return (
    <div className="step__text-wrap">
      <pre className="step__text" data-testid={testId}>
        {cut ? `${text.slice(0, CUT_AT)}…` : text}
      </pre>
      {cut && (
        <button type="button" className="link-button" data-testid="show-all" onClick={() => setWhole(true)}>
          show all ({text.length} characters)
        </button>
      )}
    </div>
  );
}

function ErrorLine({ error, testId }: { error: ErrorInfoData | null; testId: string }) {
  if (!error) return <p className="step__error" data-testid={testId}>✖ failed (no error recorded)</p>;
  return (
    <div className="step__error" data-testid={testId} data-code={error.code}>
      <strong>✖ {error.code}</strong> {error.message}
      {error.hint && <div className="muted">{error.hint}</div>}
    </div>
  );
}

function verdictText(verdict: AnswerVerdict): string {
  switch (verdict.kind) {
    case 'tool':
      return `tool call · ${verdict.tool}`;
    case 'final':
      return 'final answer';
    case 'rejected':
      return `✖ rejected${verdict.error ? ` · ${verdict.error.code}` : ''}`;
    case 'ended':
      return `run ended · ${verdict.reason}`;
    case 'pending':
      return 'pending…';
  }
}

function ModelCall({ model }: { model: ModelCallDetails }) {
  const { usage } = model;
  return (
    <>
      <p className="step__facts">
        <span className={`chip step__verdict step__verdict--${model.verdict.kind}`} data-testid="step-verdict" data-verdict={model.verdict.kind}>
          {verdictText(model.verdict)}
        </span>{' '}
        {model.durationMs} ms{model.attempts && model.attempts > 1 ? ` · ${model.attempts} attempts` : ''}
        {usage && (
          <span data-testid="step-usage">
            {' '}
            · tokens {usage.promptTokens} in / {usage.completionTokens} out / {usage.totalTokens} total
          </span>
        )}
      </p>
      {model.thoughtHidden && <p className="muted">The answer’s thought was kept out of the log (the agent is not in debug).</p>}
      {model.originalLength !== null && <p className="muted">The answer was cut from {model.originalLength} characters.</p>}
      <LongText text={model.text} testId="step-model-answer" />
    </>
  );
}

function ToolCall({ tool }: { tool: ToolCallDetails }) {
  const { result } = tool;
  return (
    <>
      <p className="step__facts">
        <code>{tool.tool}</code> · confidence {tool.confidence}
        {result && <> · {result.durationMs} ms</>}
      </p>
      <div className="muted">input</div>
      <LongText text={json(tool.input)} testId="step-tool-input" />
      {result === null ? (
        <p className="muted">running…</p>
      ) : result.ok ? (
        <>
          <div className="muted">output</div>
          <LongText text={json(result.output)} testId="step-tool-output" />
        </>
      ) : (
        <ErrorLine error={result.error} testId="step-tool-error" />
      )}
    </>
  );
}

function Iteration({ it, details }: { it: IterationDetails; details: RunDetails }) {
  const last = details.iterations.at(-1) === it;
  const answer = last ? details.ending?.outcome.answer : undefined;
  return (
    <>
      <h5 className="step__title">Messages sent to the model</h5>
      {details.systemPrompt !== null && (
        <details className="step__system">
          <summary>system prompt ({details.systemPrompt.length} characters)</summary>
          <LongText text={details.systemPrompt} testId="step-system-prompt" />
        </details>
      )}
      <ol className="step__messages" data-testid="step-messages">
        {it.messages.map((message, index) => (
          <li key={index} className={`step__message step__message--${message.role}`}>
            <span className="step__role">{message.role}</span>
            <LongText text={message.content} />
          </li>
        ))}
      </ol>
      <h5 className="step__title">Model answer (as logged)</h5>
      {it.model ? <ModelCall model={it.model} /> : <p className="muted">No answer logged.</p>}
      {it.tool && (
        <>
          <h5 className="step__title">Tool call</h5>
          <ToolCall tool={it.tool} />
        </>
      )}
      {it.failure && it.failure.step !== 'tool' && <ErrorLine error={it.failure.error} testId="step-failure" />}
      {answer !== undefined && (
        <>
          <h5 className="step__title">Run answer</h5>
          <blockquote className="answer" data-testid="step-answer">
            {answer}
          </blockquote>
        </>
      )}
    </>
  );
}

/** The details of `iteration`, with the run's input on top. */
export function StepDetails({ details, iteration, onClose }: StepDetailsProps) {
  const it = details.iterations.findLast((candidate) => candidate.iteration === iteration);
  return (
    <section className="step" data-testid="step-details" data-iteration={iteration} data-failed={it?.failure ? 'true' : undefined}>
      <header className="step__head">
        <strong>
          Iteration {iteration}
          {it?.failure && <span className="step__failed"> ✖ {it.failure.error?.code ?? 'failed'}</span>}
        </strong>
        <button type="button" className="link-button" data-testid="step-details-close" onClick={onClose}>
          close
        </button>
      </header>
      <h5 className="step__title">Run input</h5>
      <LongText text={json(details.input)} testId="step-run-input" />
      {it ? <Iteration it={it} details={details} /> : <p className="muted">Nothing logged for this iteration at this position.</p>}
    </section>
  );
}
