/** General: strategy (locked to react), max iterations (1..20), stop conditions, debug, instructions, verification and budget. */
import { useId } from 'react';
import type { ConfigIssue } from '../flow/configIssue.js';
import { STOP_CONDITIONS_FIELD } from '../flow/stopConditions.js';
import { StopConditionsField } from './StopConditionsField.js';
import { VerificationBudgetFields } from './VerificationBudgetFields.js';

/** The General tab's props. */
export interface GeneralTabProps {
  /** The agent core's config, as edited. */
  readonly config: Readonly<Record<string, unknown>>;
  /** All the config's issues: each field shows its own, the rest are listed at the bottom. */
  readonly issues: readonly ConfigIssue[];
  /** Called with the whole new config (a cleared field is removed, not set to `undefined`). */
  readonly onChange: (next: Record<string, unknown>) => void;
}

function issuesOf(issues: readonly ConfigIssue[], field: string) {
  return issues
    .filter((issue) => issue.field === field)
    .map((issue) => (
      <div key={issue.message} className="field__error" data-testid="field-error">
        {issue.message}
      </div>
    ));
}

/** The agent core's General tab: the strategy (read-only), max iterations, stop conditions, debug and instructions. */
export function GeneralTab({ config, issues, onChange }: GeneralTabProps) {
  const id = useId();
  const set = (key: string, value: unknown) => {
    const next: Record<string, unknown> = { ...config };
    if (value === undefined) delete next[key];
    else next[key] = value;
    onChange(next);
  };
  const maxIterations = typeof config.maxIterations === 'number' ? config.maxIterations : '';
  const other = issues.filter((issue) => !['maxIterations', STOP_CONDITIONS_FIELD, 'debug', 'instructions', 'strategy'].includes(issue.field ?? ''));
  return (
    <div className="tab-body" data-testid="tab-general">
      <div className="field">
        <label className="field__label" htmlFor={`${id}-strategy`}>
          strategy
        </label>
        <input id={`${id}-strategy`} className="field__input" value="react" disabled data-testid="strategy" />
        <div className="field__help">Only the ReAct strategy exists: one model call and at most one tool call per iteration.</div>
        {issuesOf(issues, 'strategy')}
      </div>
      <div className="field">
        <label className="field__label" htmlFor={`${id}-max`}>
          max iterations <span className="muted">(1–20)</span>
        </label>
        <div className="field__row">
          <input
            id={`${id}-max`}
            className="field__input field__input--narrow"
            type="number"
            min={1}
            max={20}
            step={1}
            value={maxIterations}
            data-testid="max-iterations"
            onChange={(event) => set('maxIterations', event.target.value === '' ? undefined : Number(event.target.value))}
          />
          <input
            type="range"
            min={1}
            max={20}
            value={typeof maxIterations === 'number' ? Math.min(20, Math.max(1, maxIterations)) : 5}
            onChange={(event) => set('maxIterations', Number(event.target.value))}
            aria-label="max iterations"
          />
        </div>
        {issuesOf(issues, 'maxIterations')}
      </div>
      <StopConditionsField config={config} issues={issues} onChange={onChange} />
      <div className="field field--boolean">
        <label className="toggle">
          <input type="checkbox" checked={config.debug === true} data-testid="debug-toggle" onChange={(event) => set('debug', event.target.checked)} />
          <span>debug</span>
        </label>
        <div className="field__help">Keeps the model’s optional thought in the log; otherwise it is dropped.</div>
      </div>
      <div className="field">
        <label className="field__label" htmlFor={`${id}-instructions`}>
          instructions
        </label>
        <textarea
          id={`${id}-instructions`}
          className="field__input"
          rows={5}
          value={typeof config.instructions === 'string' ? config.instructions : ''}
          placeholder="What the agent is for (added to the injected prompt)"
          data-testid="instructions"
          onChange={(event) => set('instructions', event.target.value === '' ? undefined : event.target.value)}
        />
      </div>
      <VerificationBudgetFields config={config} onChange={onChange} />
      {other.length > 0 && (
        <ul className="form-errors" data-testid="form-errors">
          {other.map((issue) => (
            <li key={`${issue.field ?? ''}${issue.message}`}>
              {issue.field && <code>{issue.field}</code>} {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
