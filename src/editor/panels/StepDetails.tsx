/**
 * One iteration of a run in detail, shown under the Runtime tab's timeline when its row is
 * clicked: the run's input, the messages the model was sent (system prompt folded), its raw answer
 * and what the core made of it, the tool's input, a person's approval or denial, and its output or
 * error, durations and tokens; a subagent's call links to the run it started.
 * Built from the run's events (`runDetails`, the same reading as `redflow replay --steps`).
 */
import { createContext, useContext, useEffect, useRef, useState } from 'react';
import type { ErrorInfoData, Exchange } from '../../contracts/schema-types.js';
import type { AnswerVerdict, IterationDetails, ModelCallDetails, RunDetails, ToolCallDetails } from '../../machines/stepDetails.js';
import { stepInProgress } from '../../machines/stepInProgress.js';

/** Longer texts are cut to this many characters until "show all" is clicked. */
const CUT_AT = 600;

/** Which part of a step to show: all of it (a timeline row), or what one node did in it (a node clicked on the canvas). */
export type StepPart = 'all' | 'model' | 'tool';

/** The step details' props. */
export interface StepDetailsProps {
  readonly details: RunDetails;
  /** The iteration shown; its details come from `details.iterations` (the last with that number, after a resume). */
  readonly iteration: number;
  /** Without it, no close button. */
  readonly onClose?: () => void;
  /** Default `all`: the run's input and the whole iteration. */
  readonly part?: StepPart;
}

/**
 * Opens a run by its trace id (the editor's runs list does the same): a subagent's call links to
 * its run with it. Without it, the trace id is shown without a link.
 */
export const OpenRunContext = createContext<((traceId: string) => void) | undefined>(undefined);

/** The run a subagent's call started, linked when the editor can open it. */
function SubagentRun({ traceId }: { traceId: string }) {
  const openRun = useContext(OpenRunContext);
  return (
    <p className="step__facts" data-testid="step-tool-subagent" data-trace-id={traceId}>
      subagent run{' '}
      {openRun ? (
        <button type="button" className="link-button" title="Open this subagent run" onClick={() => openRun(traceId)}>
          <code>{traceId}</code>
        </button>
      ) : (
        <code>{traceId}</code>
      )}
    </p>
  );
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
    case 'ask':
      return `question for a person · ${verdict.action}`;
    case 'repair':
      return 'output sent back for repair';
    case 'delegate':
      return `delegated · ${verdict.agentId}`;
    case 'rejected':
      return `✖ rejected${verdict.error ? ` · ${verdict.error.code}` : ''}${'repaired' in verdict ? ' · sent back for repair' : ''}`;
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
            · tokens {usage.estimated ? '≈' : ''}
            {usage.promptTokens} in / {usage.completionTokens} out / {usage.totalTokens} total
            {usage.costUsd !== undefined && ` · $${Number(usage.costUsd.toPrecision(3))}`}
          </span>
        )}
      </p>
      {model.thoughtHidden && (
        <p className="muted" data-testid="step-thought-hidden">
          The answer’s thought was kept out of the log (the agent is not in debug).
        </p>
      )}
      {model.originalLength !== null && <p className="muted">The answer was cut from {model.originalLength} characters.</p>}
      {model.switchedModel !== null && <p className="muted">{model.switchedModel}</p>}
      <LongText text={model.text} testId="step-model-answer" />
    </>
  );
}

/** A tool call: its input, and its output or error; `ended` is the failure marked on it when the run ended during the call. */
function ToolCall({ tool, ended }: { tool: ToolCallDetails; ended: IterationDetails['failure'] }) {
  const { result } = tool;
  return (
    <>
      <p className="step__facts">
        <code>{tool.tool}</code> · confidence {tool.confidence}
        {result && <> · {result.durationMs} ms</>}
      </p>
      <div className="muted">input</div>
      <LongText text={json(tool.input)} testId="step-tool-input" />
      {tool.childTraceId !== null && <SubagentRun traceId={tool.childTraceId} />}
      {tool.approval && (
        <p className={`step__approval step__approval--${tool.approval.decision}`} data-testid="step-tool-approval" data-decision={tool.approval.decision}>
          {tool.approval.decision}
          {tool.approval.reason !== null && `: ${tool.approval.reason}`}
        </p>
      )}
      {result === null ? (
        ended ? (
          <ErrorLine error={ended.error} testId="step-tool-error" />
        ) : tool.waiting ? (
          <p className="muted" data-testid="step-tool-waiting">
            waiting for {tool.waiting === 'approval' ? 'an approval' : 'its client to run it'}…
          </p>
        ) : (
          <p className="muted">running…</p>
        )
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

/** The model's question to a person and the answer, or its final output sent back with the schema's errors. */
function ExchangeView({ exchange }: { exchange: Exchange }) {
  if (exchange.kind === 'answer_repair') {
    return (
      <>
        <h5 className="step__title">Answer rejected, sent back for repair</h5>
        <div className="step__exchange" data-testid="step-exchange" data-kind={exchange.kind}>
          {exchange.error !== undefined && <ErrorLine error={exchange.error} testId="step-answer-rejected" />}
        </div>
      </>
    );
  }
  if (exchange.kind === 'verification') {
    const passed = exchange.status === 'answered' && exchange.error === undefined && (exchange.checks ?? []).every((check) => check.passed);
    const title = exchange.status === 'waiting' ? 'Verification: asking the verifier…' : passed ? 'Verification passed' : 'Verification failed: the model revises its answer';
    return (
      <>
        <h5 className="step__title">{title}</h5>
        <div className="step__exchange" data-testid="step-exchange" data-kind={exchange.kind} data-status={exchange.status}>
          {exchange.error !== undefined && <ErrorLine error={exchange.error} testId="step-verification-invalid" />}
          {(exchange.checks ?? []).map((check) => (
            <p key={check.name} data-testid="step-verification-check" data-passed={check.passed}>
              {check.passed ? '✔' : '✖'} <strong>{check.name}</strong>: {check.basis}
            </p>
          ))}
        </div>
      </>
    );
  }
  if (exchange.kind === 'output_repair') {
    return (
      <>
        <h5 className="step__title">Output sent back for repair</h5>
        <div className="step__exchange" data-testid="step-exchange" data-kind={exchange.kind}>
          {(exchange.errors ?? []).map((error, index) => (
            <p key={index}>✖ {error}</p>
          ))}
        </div>
        {exchange.output !== undefined && <LongText text={json(exchange.output)} />}
      </>
    );
  }
  return (
    <>
      <h5 className="step__title">Question for a person · {exchange.kind}</h5>
      <div className="step__exchange" data-testid="step-exchange" data-kind={exchange.kind} data-status={exchange.status}>
        <p data-testid="step-human-question">
          <strong>asked:</strong> {exchange.question}
        </p>
        {exchange.reason !== undefined && <p className="muted">why: {exchange.reason}</p>}
        {exchange.context !== undefined && <LongText text={json(exchange.context)} />}
        {exchange.status === 'answered' ? (
          <p data-testid="step-human-answer">
            <strong>answered:</strong> {exchange.answer}
          </p>
        ) : (
          <p className="muted" data-testid="step-human-waiting">
            waiting for a person’s answer…
          </p>
        )}
      </div>
    </>
  );
}

function Iteration({ it, details, part }: { it: IterationDetails; details: RunDetails; part: StepPart }) {
  const last = details.iterations.at(-1) === it;
  const answer = last ? details.ending?.outcome.answer : undefined;
  const toolFailure = it.failure?.step === 'tool' ? it.failure : null;
  // Logged only with debug on: the thought of the answer that called the tool, or of the final answer.
  const thought = it.tool?.thought ?? (last ? details.ending?.thought : undefined) ?? null;
  const underWay = last && stepInProgress(details)?.activity === 'model';
  if (part === 'tool') {
    return it.tool ? <ToolCall tool={it.tool} ended={toolFailure} /> : <p className="muted">No tool call in this iteration.</p>;
  }
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
      {it.model ? (
        <ModelCall model={it.model} />
      ) : (
        <p className="muted" data-testid="step-model-pending">
          {underWay ? 'Waiting for the model’s answer…' : 'No answer logged.'}
        </p>
      )}
      {thought !== null && (
        <>
          <h5 className="step__title">Thought (debug)</h5>
          <LongText text={thought} testId="step-thought" />
        </>
      )}
      {it.tool && part === 'all' && (
        <>
          <h5 className="step__title">Tool call</h5>
          <ToolCall tool={it.tool} ended={toolFailure} />
        </>
      )}
      {it.exchange && <ExchangeView exchange={it.exchange} />}
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

/** The details of `iteration`, with the run's input on top (the whole step), or the part of one node. */
export function StepDetails({ details, iteration, onClose, part = 'all' }: StepDetailsProps) {
  const it = details.iterations.findLast((candidate) => candidate.iteration === iteration);
  // Opened from a timeline row, the details start below the timeline: bring their top into view.
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    if (part === 'all') section.current?.scrollIntoView({ block: 'nearest' });
  }, [iteration, part]);
  return (
    <section ref={section} className="step" data-testid="step-details" data-iteration={iteration} data-part={part} data-failed={it?.failure ? 'true' : undefined}>
      <header className="step__head">
        <strong>
          Iteration {iteration}
          {it?.failure && <span className="step__failed"> ✖ {it.failure.error?.code ?? 'failed'}</span>}
        </strong>
        {onClose && (
          <button type="button" className="link-button" data-testid="step-details-close" onClick={onClose}>
            close
          </button>
        )}
      </header>
      {part === 'all' && (
        <>
          <h5 className="step__title">Run input</h5>
          <LongText text={json(details.input)} testId="step-run-input" />
        </>
      )}
      {it ? <Iteration it={it} details={details} part={part} /> : <p className="muted">Nothing logged for this iteration at this position.</p>}
    </section>
  );
}
