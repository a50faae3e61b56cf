/**
 * The agent core's verification (off, self, or a verifier model of its own, with a rubric and the
 * failures allowed: docs/verification.md) and budget (tokens and cost: docs/budgets.md) fields.
 * What the schema does not say (a cleared field) is removed from the config, not set empty.
 */
import { useId } from 'react';

/** How the agent verifies its final answers, as the form offers it. */
type VerificationMode = 'off' | 'self' | 'model';

/** The fields' props: the agent core's config, and where the whole new config goes. */
export interface VerificationBudgetFieldsProps {
  readonly config: Readonly<Record<string, unknown>>;
  readonly onChange: (next: Record<string, unknown>) => void;
}

type VerificationObject = { model?: unknown; rubric?: string; criteria?: unknown; maxFailures?: number };

function verificationParts(value: unknown): { mode: VerificationMode; settings: VerificationObject } {
  if (value === 'self') return { mode: 'self', settings: {} };
  if (typeof value !== 'object' || value === null) return { mode: 'off', settings: {} };
  const settings = value as VerificationObject;
  return { mode: settings.model === undefined ? 'self' : 'model', settings };
}

/** The config's `verification` for a mode and its settings: "self" alone when nothing else is set. */
function verificationValue(mode: VerificationMode, settings: VerificationObject): unknown {
  if (mode === 'off') return undefined;
  const { model, ...rest } = settings;
  const kept = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
  if (mode === 'self') return Object.keys(kept).length === 0 ? 'self' : kept;
  return { model: model ?? '', ...kept };
}

function numberOrUndefined(text: string): number | undefined {
  return text === '' ? undefined : Number(text);
}

/** The verification and budget fields of the agent core's General tab. */
export function VerificationBudgetFields({ config, onChange }: VerificationBudgetFieldsProps) {
  const id = useId();
  const { mode, settings } = verificationParts(config.verification);
  const set = (key: string, value: unknown) => {
    const next: Record<string, unknown> = { ...config };
    if (value === undefined) delete next[key];
    else next[key] = value;
    onChange(next);
  };
  const setVerification = (nextMode: VerificationMode, changes: VerificationObject = {}) => set('verification', verificationValue(nextMode, { ...settings, ...changes }));
  const budget = (typeof config.budget === 'object' && config.budget !== null ? config.budget : undefined) as Record<string, unknown> | undefined;
  const setBudget = (key: 'maxTokens' | 'maxCost', value: number | undefined) => {
    const next: Record<string, unknown> = { ...budget };
    if (value === undefined) delete next[key];
    else next[key] = value;
    set('budget', Object.keys(next).length === 0 ? undefined : next);
  };
  const modelName = typeof settings.model === 'string' ? settings.model : '';
  return (
    <>
      <div className="field">
        <label className="field__label" htmlFor={`${id}-verification`}>
          verification
        </label>
        <select id={`${id}-verification`} className="field__input" value={mode} data-testid="verification-mode" onChange={(event) => setVerification(event.target.value as VerificationMode)}>
          <option value="off">off</option>
          <option value="self">self: the run’s model verifies</option>
          <option value="model">model: a verifier model of its own</option>
        </select>
        <div className="field__help">A final answer is checked (completeness, consistency, correctness, constraints) before the run ends; a failed check is revised.</div>
      </div>
      {mode === 'model' && (
        <div className="field">
          <label className="field__label" htmlFor={`${id}-verifier`}>
            verifier model <span className="muted">(a model.llm node’s id, no edge needed)</span>
          </label>
          <input
            id={`${id}-verifier`}
            className="field__input"
            value={typeof settings.model === 'object' ? '' : modelName}
            placeholder={typeof settings.model === 'object' ? 'inline settings (edit the flow file)' : 'judge'}
            data-testid="verification-model"
            onChange={(event) => setVerification('model', { model: event.target.value })}
          />
        </div>
      )}
      {mode !== 'off' && (
        <>
          <div className="field">
            <label className="field__label" htmlFor={`${id}-rubric`}>
              rubric
            </label>
            <textarea
              id={`${id}-rubric`}
              className="field__input"
              rows={3}
              value={settings.rubric ?? ''}
              placeholder="What the verifier holds the answer to, beyond the four checks"
              data-testid="verification-rubric"
              onChange={(event) => setVerification(mode, { rubric: event.target.value === '' ? undefined : event.target.value })}
            />
          </div>
          <div className="field">
            <label className="field__label" htmlFor={`${id}-failures`}>
              max failures <span className="muted">(1–10, default 2)</span>
            </label>
            <input
              id={`${id}-failures`}
              className="field__input field__input--narrow"
              type="number"
              min={1}
              max={10}
              step={1}
              value={settings.maxFailures ?? ''}
              data-testid="verification-max-failures"
              onChange={(event) => setVerification(mode, { maxFailures: numberOrUndefined(event.target.value) })}
            />
          </div>
        </>
      )}
      <div className="field">
        <label className="field__label" htmlFor={`${id}-tokens`}>
          budget: max tokens
        </label>
        <input
          id={`${id}-tokens`}
          className="field__input field__input--narrow"
          type="number"
          min={1}
          step={1}
          value={typeof budget?.maxTokens === 'number' ? budget.maxTokens : ''}
          data-testid="budget-max-tokens"
          onChange={(event) => setBudget('maxTokens', numberOrUndefined(event.target.value))}
        />
        <label className="field__label" htmlFor={`${id}-cost`}>
          budget: max cost <span className="muted">(US dollars)</span>
        </label>
        <input
          id={`${id}-cost`}
          className="field__input field__input--narrow"
          type="number"
          min={0}
          step="any"
          value={typeof budget?.maxCost === 'number' ? budget.maxCost : ''}
          data-testid="budget-max-cost"
          onChange={(event) => setBudget('maxCost', numberOrUndefined(event.target.value))}
        />
        <div className="field__help">What one run may spend on its model: past it, the run ends budget_exhausted.</div>
      </div>
    </>
  );
}
