/**
 * A node config form generated from the config's JSON Schema (the same schema the runtime checks):
 * a field per property — text, number, checkbox, select, list or JSON — with the schema's
 * description as help and the validation problems next to the field they are about.
 */
import { useEffect, useId, useState } from 'react';
import type { ConfigIssue } from '../flow/configIssue.js';
import type { JsonSchema } from '../flow/configSchemas.js';

/** The schema form's props. */
export interface SchemaFormProps {
  /** The config's JSON Schema: one field per property (nested objects are edited as JSON). */
  readonly schema: JsonSchema;
  readonly value: Readonly<Record<string, unknown>>;
  /** The config's issues: each under its field, the rest (no field, or a hidden one) above the form. */
  readonly issues: readonly ConfigIssue[];
  /** Called with the whole new config (a field set to `undefined` is removed). */
  readonly onChange: (next: Record<string, unknown>) => void;
  /** Properties not to show (edited elsewhere). */
  readonly hidden?: readonly string[];
  /** The form's `data-testid`. */
  readonly testId?: string;
}

type FieldKind = 'text' | 'textarea' | 'integer' | 'number' | 'boolean' | 'enum' | 'list' | 'json';

function kindOf(key: string, schema: JsonSchema): FieldKind {
  if (schema.enum) return 'enum';
  const type = Array.isArray(schema.type) ? undefined : (schema.type as string | undefined);
  switch (type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'string':
      return key === 'query' || key === 'instructions' || key === 'description' ? 'textarea' : 'text';
    case 'array':
      return schema.items?.type === 'string' ? 'list' : 'json';
    default:
      return 'json';
  }
}

function withField(value: Readonly<Record<string, unknown>>, key: string, next: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...value };
  if (next === undefined) delete copy[key];
  else copy[key] = next;
  return copy;
}

/** A JSON value edited as text: parsed on each change; kept as typed text while it does not parse. */
function JsonField({ id, value, onChange }: { id: string; value: unknown; onChange: (next: unknown) => void }) {
  const shown = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [text, setText] = useState(shown);
  const [error, setError] = useState<string>();
  useEffect(() => {
    // Follow outside changes (another flow opened), unless the text already means the same value.
    setText((current) => {
      try {
        return current.trim() !== '' && JSON.stringify(JSON.parse(current)) === JSON.stringify(value) ? current : shown;
      } catch {
        return current;
      }
    });
  }, [shown, value]);
  return (
    <>
      <textarea
        id={id}
        className="field__input field__input--code"
        rows={Math.min(10, Math.max(3, text.split('\n').length))}
        value={text}
        spellCheck={false}
        onChange={(event) => {
          const next = event.target.value;
          setText(next);
          if (next.trim() === '') {
            setError(undefined);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(next) as unknown);
            setError(undefined);
          } catch (thrown) {
            setError(thrown instanceof Error ? thrown.message : 'invalid JSON');
          }
        }}
      />
      {error && <div className="field__error" data-testid="json-error">not JSON yet: {error}</div>}
    </>
  );
}

function Field({
  name,
  schema,
  required,
  value,
  issues,
  onChange,
}: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  issues: readonly ConfigIssue[];
  onChange: (next: unknown) => void;
}) {
  const id = useId();
  const kind = kindOf(name, schema);
  const placeholder = schema.default !== undefined ? `default: ${JSON.stringify(schema.default)}` : '';
  let control;
  switch (kind) {
    case 'boolean':
      control = (
        <input
          id={id}
          type="checkbox"
          checked={value === true || (value === undefined && schema.default === true)}
          onChange={(event) => onChange(event.target.checked)}
        />
      );
      break;
    case 'enum':
      control = (
        <select id={id} className="field__input" value={value === undefined ? '' : String(value)} onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value)}>
          <option value="">{placeholder || '—'}</option>
          {(schema.enum ?? []).map((option) => (
            <option key={String(option)} value={String(option)}>
              {String(option)}
            </option>
          ))}
        </select>
      );
      break;
    case 'integer':
    case 'number':
      control = (
        <input
          id={id}
          className="field__input"
          type="number"
          step={kind === 'integer' ? 1 : 'any'}
          min={schema.minimum}
          max={schema.maximum}
          placeholder={placeholder}
          value={typeof value === 'number' ? value : ''}
          onChange={(event) => onChange(event.target.value === '' ? undefined : Number(event.target.value))}
        />
      );
      break;
    case 'list':
      control = (
        <input
          id={id}
          className="field__input"
          placeholder="comma-separated"
          value={Array.isArray(value) ? value.join(', ') : ''}
          onChange={(event) => {
            const items = event.target.value.split(',').map((item) => item.trim()).filter(Boolean);
            onChange(items.length === 0 ? undefined : items);
          }}
        />
      );
      break;
    case 'json':
      control = <JsonField id={id} value={value} onChange={onChange} />;
      break;
    case 'textarea':
      control = (
        <textarea id={id} className="field__input" rows={3} value={typeof value === 'string' ? value : ''} onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value)} />
      );
      break;
    case 'text':
      control = (
        <input id={id} className="field__input" placeholder={placeholder} value={typeof value === 'string' ? value : ''} onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value)} />
      );
      break;
  }
  const label = (
    <>
      {name}
      {required && <span className="field__required" title="required">*</span>}
    </>
  );
  return (
    <div className={`field field--${kind}${issues.length > 0 ? ' field--invalid' : ''}`} data-testid={`field-${name}`}>
      {kind === 'boolean' ? (
        <label htmlFor={id} className="toggle field__label">
          {control}
          {label}
        </label>
      ) : (
        <>
          <label htmlFor={id} className="field__label">
            {label}
          </label>
          {control}
        </>
      )}
      {schema.description && <div className="field__help">{schema.description}</div>}
      {issues.map((issue) => (
        <div key={issue.message} className="field__error" data-testid="field-error">
          {issue.message}
        </div>
      ))}
    </div>
  );
}

/** A form for a config object, generated from its JSON Schema; controlled (`value` in, whole new configs out). */
export function SchemaForm({ schema, value, issues, onChange, hidden = [], testId }: SchemaFormProps) {
  const properties = Object.entries(schema.properties ?? {}).filter(([key]) => !hidden.includes(key));
  const known = new Set(properties.map(([key]) => key));
  const general = issues.filter((issue) => issue.field === undefined || !known.has(issue.field));
  return (
    <div className="schema-form" data-testid={testId}>
      {general.length > 0 && (
        <ul className="form-errors" data-testid="form-errors">
          {general.map((issue) => (
            <li key={`${issue.field ?? ''}${issue.message}`}>
              {issue.field ? <code>{issue.field}</code> : null} {issue.message}
            </li>
          ))}
        </ul>
      )}
      {properties.length === 0 && <p className="muted">This node has nothing to configure.</p>}
      {properties.map(([key, property]) => (
        <Field
          key={key}
          name={key}
          schema={property}
          required={schema.required?.includes(key) ?? false}
          value={value[key]}
          issues={issues.filter((issue) => issue.field === key)}
          onChange={(next) => onChange(withField(value, key, next))}
        />
      ))}
    </div>
  );
}
