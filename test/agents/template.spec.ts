import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderTemplate, templateVariables } from '../../src/agents/template.js';
import { ErrorCode } from '../../src/errors.js';

describe('renderTemplate', () => {
  it('should put each input in for its ${variable}, text as it is and anything else as JSON', () => {
    expect(renderTemplate('Review ${file} for ${ focus } (${limits}, ${n}, ${strict})', { file: 'a.ts', focus: 'bugs', limits: { max: 3 }, n: 2, strict: false })).toBe(
      'Review a.ts for bugs ({"max":3}, 2, false)',
    );
  });

  it('should refuse a variable the inputs do not give with TEMPLATE_VARIABLE_MISSING, naming it and where it is', () => {
    expect(() => renderTemplate('Hello ${person}', { people: 'x' }, 'promptConfig.query')).toThrow(
      expect.objectContaining({ code: ErrorCode.TEMPLATE_VARIABLE_MISSING, path: 'promptConfig.query', message: expect.stringContaining('${person}') }),
    );
    expect(() => renderTemplate('Hello ${person}', { person: undefined })).toThrow(expect.objectContaining({ code: ErrorCode.TEMPLATE_VARIABLE_MISSING }));
  });

  it('should not find names on the prototype, and leave what is not a variable name as text', () => {
    expect(() => renderTemplate('${constructor}', {})).toThrow(expect.objectContaining({ code: ErrorCode.TEMPLATE_VARIABLE_MISSING }));
    expect(() => renderTemplate('${__proto__}', {})).toThrow(expect.objectContaining({ code: ErrorCode.TEMPLATE_VARIABLE_MISSING }));
    expect(renderTemplate('${1 + 1} ${process.exit(1)} ${a.b} $ {x}', {})).toBe('${1 + 1} ${process.exit(1)} ${a.b} $ {x}');
  });

  it('should turn \\${ into a literal ${', () => {
    expect(renderTemplate('costs \\${price} for ${who}', { who: 'Ada' })).toBe('costs ${price} for Ada');
    expect(templateVariables('costs \\${price} for ${who}')).toEqual(['who']);
  });

  it('should list the variables once each, in order of first use', () => {
    expect(templateVariables('${b} ${a} ${b} ${ c }')).toEqual(['b', 'a', 'c']);
  });

  /** Text with no `${` and no `\` in it, so it holds no placeholder and no escape. */
  const plain = fc.string({ maxLength: 12 }).map((text) => text.replace(/\$\{|\\/g, '_'));
  const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/).filter((n) => n !== '__proto__');
  /** Values, some of which look like placeholders or code themselves. */
  const value = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('${x}', '${constructor}', '${process.exit(1)}', '`${1+1}`', '\\${y}'),
    fc.integer(),
    fc.boolean(),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  );

  it('should replace every variable given, once, exactly with its value, and never evaluate anything (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(plain, name), { maxLength: 6 }), plain, fc.dictionary(name, value, { maxKeys: 6 }), (parts, tail, extra) => {
        const inputs: Record<string, unknown> = { ...extra };
        for (const [, n] of parts) if (!Object.hasOwn(inputs, n)) inputs[n] = `v_${n}`;
        const template = parts.map(([text, n]) => `${text}\${${n}}`).join('') + tail;
        const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
        const expected = parts.map(([t, n]) => t + text(inputs[n])).join('') + tail;
        // Values that look like placeholders or code are put in as they are: one pass, nothing run.
        expect(renderTemplate(template, inputs)).toBe(expected);
      }),
    );
  });

  it('should leave no ${…} of a variable given, when the values hold none (property)', () => {
    const safeValue = fc.string({ maxLength: 12 }).map((text) => text.replace(/\$\{|\\/g, '_'));
    fc.assert(
      fc.property(fc.array(fc.tuple(plain, name), { minLength: 1, maxLength: 6 }), fc.array(safeValue, { minLength: 6, maxLength: 6 }), (parts, values) => {
        const inputs = Object.fromEntries(parts.map(([, n], i) => [n, values[i % values.length]]));
        const rendered = renderTemplate(parts.map(([text, n]) => `${text}\${${n}}`).join(''), inputs);
        for (const n of Object.keys(inputs)) expect(rendered).not.toMatch(new RegExp(`\\$\\{\\s*${n}\\s*\\}`));
      }),
    );
  });
});
