/**
 * Runtime / Debug: the iteration timeline (action, tool, confidence, duration per iteration, from
 * `envelope.observability.events`), the last action, the tokens of the model calls so far (when the
 * model reports them) and the confidence of each iteration — live
 * while a run streams, or at the scrubber's position. A run that waits says for what, since when
 * and until when. The step under way is marked on its row (a model call being waited for gets a
 * row of its own). A clicked row opens that step's details.
 */
import { useState } from 'react';
import type { RunView } from '../run/runView.js';
import { StepDetails } from './StepDetails.js';
import { LiveAnswerPanel } from '../run/LiveAnswerView.js';
import { WaitFacts } from './WaitFacts.js';
import { RunViewState } from '../run/runViewMachine.js';
import { stepInProgress, type StepActivity } from '../../machines/stepInProgress.js';
import type { IterationStep } from '../../contracts/schema-types.js';

/** What a row under way says in place of a finished step's figures. */
const UNDER_WAY: Record<StepActivity, string> = { model: 'waiting for the model…', tool: 'running…', waiting: 'waiting…' };

/** The Runtime / Debug tab's props. */
export interface RuntimeTabProps {
  /** The run as of the scrubber's position (the latest event while it streams). */
  readonly view: RunView;
  /** The run panel's state (`RunViewState`), shown as a chip (`waiting` for a run followed live that waits). */
  readonly runState: string;
  /** The viewed run; `undefined` before any run. */
  readonly traceId: string | undefined;
}

function Confidence({ value }: { value: number | undefined }) {
  if (value === undefined) return <span className="muted">—</span>;
  return (
    <span className="confidence" title={`confidence ${value}`}>
      <span className="confidence__bar">
        <span className="confidence__fill" style={{ width: `${Math.round(value * 100)}%` }} />
      </span>
      <span className="confidence__value">{value.toFixed(2)}</span>
    </span>
  );
}

/** The Runtime / Debug tab: run state, last action, outcome and answer, and the iteration timeline. */
export function RuntimeTab({ view, runState, traceId }: RuntimeTabProps) {
  const { envelope, timeline } = view;
  const { outcome, usage } = envelope.observability;
  const { lastAction, lastTool, iteration } = envelope.state;
  // The open step belongs to its run: another run (a new one, or one opened from the list) starts with none.
  const [selection, setSelection] = useState<{ readonly traceId: string | undefined; readonly iteration: number }>();
  const selected = selection !== undefined && selection.traceId === traceId ? selection.iteration : undefined;
  const setSelected = (iteration: number | undefined) => setSelection(iteration === undefined ? undefined : { traceId, iteration });
  // The step details know why an iteration failed or the run ended in it (the iteration limit
  // after a good tool call leaves no code on the timeline's line): the row shows it too.
  const failureOf = new Map(view.details.iterations.map((it) => [it.iteration, it.failure]));
  // A run followed live that waits is parked, not streaming: say so, and what it waits for below.
  const shownState = runState === RunViewState.Streaming && view.wait !== undefined ? 'waiting' : runState;
  // The step under way is marked; a model call being waited for has no line in the envelope's
  // timeline yet, so it gets one (clicked, it shows the messages the model was sent).
  const inProgress = stepInProgress(view.details);
  const rows: readonly IterationStep[] =
    inProgress?.activity === 'model' && timeline.at(-1)?.iteration !== inProgress.iteration ? [...timeline, { iteration: inProgress.iteration, action: 'model' }] : timeline;
  return (
    <div className="tab-body" data-testid="tab-runtime">
      <dl className="facts">
        <dt>run</dt>
        <dd data-testid="run-state">
          <span className={`chip chip--${shownState}`}>{shownState}</span> {traceId && <code className="trace-id">{traceId}</code>}
        </dd>
        {view.wait && <WaitFacts wait={view.wait} />}
        <dt>iteration</dt>
        <dd data-testid="run-iteration">{iteration}</dd>
        {usage && (
          <>
            <dt>tokens</dt>
            <dd data-testid="run-tokens" title="all model calls so far; each call's are in its step">
              {usage.promptTokens} in / {usage.completionTokens} out ({usage.totalTokens})
            </dd>
          </>
        )}
        <dt>last action</dt>
        <dd data-testid="last-action">
          {lastAction ? (
            <>
              <strong>{lastAction}</strong>
              {lastTool && lastAction === 'tool' ? <> · {lastTool}</> : null}
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </dd>
        {outcome && (
          <>
            <dt>outcome</dt>
            <dd data-testid="run-outcome">
              <span className={`chip chip--outcome-${outcome.status}`}>{outcome.status}</span> {outcome.reason}
            </dd>
          </>
        )}
      </dl>
      {outcome?.detail && (
        <p className="muted" data-testid="run-detail">
          {outcome.detail}
        </p>
      )}
      {outcome?.answer && (
        <blockquote className="answer" data-testid="run-answer">
          {outcome.answer}
        </blockquote>
      )}
      <LiveAnswerPanel />
      <h4 className="section-title">Iteration timeline</h4>
      {rows.length === 0 ? (
        <p className="empty">{traceId ? 'Waiting for the first answer…' : 'Run the flow (toolbar) or open a run to see its iterations here.'}</p>
      ) : (
        <table className="timeline" data-testid="timeline">
          <thead>
            <tr>
              <th>#</th>
              <th>action</th>
              <th>tool</th>
              <th>confidence</th>
              <th className="num">ms</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((step, index) => {
              // A tool line with a code is a failed call: mark it like an error, not like a success.
              const failure = failureOf.get(step.iteration);
              const code = step.code ?? failure?.error?.code;
              const failed = (step.action === 'tool' && step.code !== undefined) || (failure !== undefined && failure !== null);
              const underWay = inProgress !== undefined && index === rows.length - 1 && step.iteration === inProgress.iteration ? inProgress.activity : undefined;
              return (
                <tr
                  key={`${step.iteration}-${index}`}
                  className={`timeline__row timeline__row--${step.action}${failed ? ' timeline__row--failed' : ''}${underWay ? ' timeline__row--in-progress' : ''}`}
                  data-testid="timeline-row"
                  data-action={step.action}
                  data-failed={failed ? 'true' : undefined}
                  data-in-progress={underWay}
                  aria-selected={selected === step.iteration}
                  title="Show this step’s details"
                  onClick={() => setSelected(selected === step.iteration ? undefined : step.iteration)}
                >
                  <td>{step.iteration}</td>
                  <td>
                    <span className={`action action--${step.action}`}>{step.action}</span>
                    {code && <code className="timeline__code">{failed ? `✖ ${code}` : code}</code>}
                    {underWay && (
                      <span className="timeline__progress" data-testid="timeline-in-progress">
                        {UNDER_WAY[underWay]}
                      </span>
                    )}
                  </td>
                  <td>{step.tool ?? <span className="muted">—</span>}</td>
                  <td>
                    <Confidence value={step.confidence} />
                  </td>
                  <td className="num">{step.durationMs ?? '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {selected !== undefined && <StepDetails details={view.details} iteration={selected} onClose={() => setSelected(undefined)} />}
    </div>
  );
}
