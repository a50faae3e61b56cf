import { ErrorCode, RedflowError, errorInfo } from '../errors.js';

/**
 * A placeholder, `${name}` (spaces inside the braces allowed), or the escape `\${`, which stands
 * for a literal `${`. A name is a JavaScript identifier without `$`: anything else between `${` and
 * `}` is plain text, never code.
 */
const PLACEHOLDER = /\\\$\{|\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}/g;

/** The text a value takes in a prompt: strings as they are, anything else as JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * The variables `template` names, each once, in order of first use.
 *
 * @example
 * ```ts
 * templateVariables('Review ${file} for ${focus}, then ${file} again'); // ['file', 'focus']
 * ```
 */
export function templateVariables(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER)) if (match[1] !== undefined) names.add(match[1]);
  return [...names];
}

/**
 * `template` with each `${name}` replaced by `inputs[name]` (a string as it is, anything else as
 * JSON), in one pass: a value that itself holds `${…}` is put in as it is, never substituted again,
 * and nothing is ever evaluated. `\${` gives a literal `${`. Only the inputs' own properties count
 * (`${constructor}` is not found on a plain object).
 *
 * @param where What the template is, for the error (`promptConfig.systemPrompt`).
 * @throws RedflowError `TEMPLATE_VARIABLE_MISSING` when a variable is not in `inputs` (or is
 *   `undefined` there), naming it and where it is used.
 *
 * @example
 * ```ts
 * renderTemplate('Review ${file}.', { file: 'src/index.ts' }); // 'Review src/index.ts.'
 * renderTemplate('Costs \\${price}', {});                     // 'Costs ${price}'
 * ```
 */
export function renderTemplate(template: string, inputs: Readonly<Record<string, unknown>>, where = 'the template'): string {
  return template.replace(PLACEHOLDER, (_match, name: string | undefined) => {
    if (name === undefined) return '${';
    const value = Object.hasOwn(inputs, name) ? inputs[name] : undefined;
    if (value === undefined) {
      const given = Object.keys(inputs);
      throw new RedflowError(
        errorInfo(ErrorCode.TEMPLATE_VARIABLE_MISSING, `${where} uses \${${name}}, and the inputs give no "${name}"`, {
          hint: `pass it: execute(definition, { inputs: { ${name}: … } }) (the inputs given: ${given.length > 0 ? given.join(', ') : 'none'}); write \\\${${name}} for the literal text`,
          path: where,
        }),
      );
    }
    return asText(value);
  });
}
