/**
 * The agent core's stop conditions on the General tab: one row per condition type, switched on or
 * off, with its value edited inline and its problems (schema and range, from the config's
 * {@link ConfigIssue}s) under the row. Writes `stopConditions` as the schema has it: `[{ type, value? }]`.
 */
import { useId } from 'react';
import type { ConfigIssue } from '../flow/configIssue.js';
import {
  STOP_CONDITIONS_FIELD,
  STOP_CONDITION_SPECS,
  indexesOf,
  setStopCondition,
  setStopConditionValue,
  stopConditionsOf,
  valueRange,
  type StopConditionSpec,
} from '../flow/stopConditions.js';

/** The stop conditions field's props. */
export interface StopConditionsFieldProps {
  /** The agent core's whole config (a value's range can depend on other fields). */
  readonly config: Readonly<Record<string, unknown>>;
  /** All the config's issues; the field shows those of `stopConditions`. */
  readonly issues: readonly ConfigIssue[];
  /** Called with the whole new config. */
  readonly onChange: (next: Record<string, unknown>) => void;
}

interface RowProps {
  readonly spec: StopConditionSpec;
  readonly config: Readonly<Record<string, unknown>>;
  /** Indexes in `stopConditions` of this type's entries; the runtime reads the first. */
  readonly indexes: readonly number[];
  readonly issues: readonly ConfigIssue[];
  readonly onChange: (next: Record<string, unknown>) => void;
}

function StopConditionRow({ spec, config, indexes, issues, onChange }: RowProps) {
  const id = useId();
  const { type } = spec;
  const [first] = indexes;
  const enabled = first !== undefined;
  const entry = first === undefined ? undefined : (stopConditionsOf(config)[first] as { value?: unknown });
  const value = typeof entry?.value === 'number' ? entry.value : '';
  const range = valueRange(type, config);
  return (
    <div
      className={`stop-condition${issues.length > 0 ? ' stop-condition--invalid' : ''}${enabled ? ' is-enabled' : ''}`}
      data-testid={`stop-condition-${type}`}
      data-enabled={enabled}
    >
      <div className="stop-condition__head">
        <label className="toggle" htmlFor={`${id}-on`}>
          <input
            id={`${id}-on`}
            type="checkbox"
            checked={enabled}
            data-testid={`stop-condition-${type}-toggle`}
            onChange={(event) => onChange(setStopCondition(config, type, event.target.checked))}
          />
          <code>{type}</code>
        </label>
        {range && (
          <span className="stop-condition__value">
            <input
              className="field__input field__input--narrow"
              type="number"
              min={range.min}
              max={range.max}
              step={range.step}
              value={enabled ? value : ''}
              disabled={!enabled}
              aria-label={`${type} value`}
              data-testid={`stop-condition-${type}-value`}
              onChange={(event) => onChange(setStopConditionValue(config, type, event.target.value === '' ? undefined : Number(event.target.value)))}
            />
            <span className="muted">
              {range.min}–{range.max}
            </span>
          </span>
        )}
      </div>
      <div className="field__help">{spec.help}</div>
      {indexes.length > 1 && (
        <div className="field__help" data-testid="stop-condition-duplicates">
          listed {indexes.length} times: the first entry (stopConditions[{first}]) is the one used and edited here
        </div>
      )}
      {issues.map((issue) => {
        const at = issue.path?.[0];
        const text = at === String(first) ? (issue.detail ?? issue.message) : `stopConditions[${at}]: ${issue.detail ?? issue.message}`;
        return (
          <div key={issue.message} className="field__error" data-testid="stop-condition-error">
            {text}
          </div>
        );
      })}
    </div>
  );
}

/**
 * One row per known stop condition type; issues that belong to no row (the list itself, or an entry
 * of unknown type) are listed under the rows.
 */
export function StopConditionsField({ config, issues, onChange }: StopConditionsFieldProps) {
  const conditions = stopConditionsOf(config);
  const own = issues.filter((issue) => issue.field === STOP_CONDITIONS_FIELD);
  const rows = STOP_CONDITION_SPECS.map((spec) => {
    const indexes = indexesOf(conditions, spec.type);
    const rowIssues = own.filter((issue) => issue.path?.[0] !== undefined && indexes.includes(Number(issue.path[0])));
    return { spec, indexes, rowIssues };
  });
  // The rest: the list itself, or entries of no known type.
  const general = own.filter((issue) => !rows.some((row) => row.rowIssues.includes(issue)));
  return (
    <div className="field stop-conditions" data-testid="stop-conditions">
      <div className="field__label">stop conditions</div>
      {rows.map(({ spec, indexes, rowIssues }) => (
        <StopConditionRow key={spec.type} spec={spec} config={config} indexes={indexes} issues={rowIssues} onChange={onChange} />
      ))}
      {general.map((issue) => (
        <div key={issue.message} className="field__error" data-testid="stop-conditions-error">
          stopConditions {issue.message}
        </div>
      ))}
    </div>
  );
}
