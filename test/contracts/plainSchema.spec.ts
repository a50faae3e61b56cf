import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePlainSchema } from '../../src/contracts/plainSchema.js';
import { compileUserSchema, describeSchemaErrors } from '../../src/contracts/schemas.js';

// A plain user schema (a tool's input) is checked without ajv; its verdicts must be ajv's own,
// first error included, since that message goes back to the model. Compared with ajv, with the
// options user schemas get, on random schemas of the subset and random values.

const ajv = new Ajv({ strict: false, allErrors: false, addUsedSchema: false, validateFormats: false });

/** ajv's verdict as compileUserSchema reports it. */
function ajvVerdict(schema: object, value: unknown): true | string {
  const validate = ajv.compile(schema);
  return validate(value) ? true : describeSchemaErrors(validate.errors);
}

/** Whether ajv takes the schema (it throws on one its meta-schema refuses). */
function isValidSchema(schema: object): boolean {
  try {
    ajv.compile(schema);
    return true;
  } catch {
    return false;
  }
}

function plainVerdict(schema: object, value: unknown): true | string {
  const check = compilePlainSchema(schema);
  if (!check) throw new Error(`not plain: ${JSON.stringify(schema)}`);
  const found = check(value);
  return found ? describeSchemaErrors([found]) : true;
}

const names = fc.constantFrom('id', 'name', 'n', 'tags', 'a/b', 'x~y');
const primitive = fc.oneof(fc.constantFrom(null, true, false, 0, 1, -2, 2.5, 10, '', 'A-1001', 'a', 'héllo', '😀😀'));
const typeName = fc.constantFrom('string', 'number', 'integer', 'boolean', 'object', 'array', 'null');

/** A schema of the subset, nested at most `depth` levels (ajv compiles each, so they stay small). */
const schemaOf: fc.Memo<Record<string, unknown>> = fc.memo((depth) =>
  fc.record(
    {
      type: fc.oneof(typeName, fc.uniqueArray(typeName, { minLength: 1, maxLength: 3 })),
      enum: fc.array(primitive, { minLength: 1, maxLength: 3 }),
      const: primitive,
      minimum: fc.integer({ min: -3, max: 5 }),
      maximum: fc.integer({ min: -3, max: 12 }),
      exclusiveMinimum: fc.integer({ min: -3, max: 5 }),
      exclusiveMaximum: fc.integer({ min: -3, max: 12 }),
      minLength: fc.nat(3),
      maxLength: fc.nat(6),
      pattern: fc.constantFrom('^[A-Z]-\\d{4}$', 'a', '^.$'),
      minItems: fc.nat(2),
      maxItems: fc.nat(3),
      required: fc.uniqueArray(names, { maxLength: 3 }),
      description: fc.constant('what it is'),
      format: fc.constantFrom('email', 'date-time'),
      ...(depth > 1 && {
        items: schemaOf(depth - 1),
        properties: fc.dictionary(names, schemaOf(depth - 1), { maxKeys: 3 }),
        additionalProperties: fc.oneof(fc.boolean(), schemaOf(depth - 1)),
      }),
    },
    { requiredKeys: [] },
  ),
);
const schema = schemaOf(3);

const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    primitive,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(names, tie('value'), { maxKeys: 4 }),
  ),
}));

describe('plain user schemas, checked without ajv', () => {
  it("should give ajv's verdict and first error for every schema of the subset and any value", () => {
    fc.assert(
      fc.property(schema, fc.array(value, { minLength: 1, maxLength: 6 }), (s, values) => {
        // A schema ajv refuses is never taken as plain (ajv must explain it); the rest are compared.
        const valid = isValidSchema(s);
        expect(valid || compilePlainSchema(s) === undefined, JSON.stringify(s)).toBe(true);
        fc.pre(valid);
        for (const v of values) expect(plainVerdict(s, v), JSON.stringify({ s, v })).toEqual(ajvVerdict(s, v));
      }),
      { numRuns: 1000 },
    );
  });

  it('should agree with ajv where its rules are easy to miss: code point lengths, format moving the type check, type lists', () => {
    const cases: [object, unknown][] = [
      [{ type: 'string', maxLength: 1 }, '😀'],
      [{ type: 'string', maxLength: 1 }, '😀😀'],
      [{ type: 'string', const: null, format: 'email' }, {}],
      [{ type: 'string', const: null }, {}],
      [{ type: ['string', 'null'] }, 1],
      [{ type: 'object', enum: [{ a: 1 }], required: ['b'] }, { a: 1 }],
      [{ type: 'object', additionalProperties: { type: 'number' } }, { 'a/b': 'x' }],
    ];
    for (const [s, v] of cases) expect(plainVerdict(s, v), JSON.stringify({ s, v })).toEqual(ajvVerdict(s, v));
  });

  it('should explain the demo tool\'s wrong input as ajv does', () => {
    const lookupOrder = {
      type: 'object',
      required: ['orderId'],
      properties: { orderId: { type: 'string', pattern: '^[A-Z]-\\d{4}$' } },
      additionalProperties: false,
    };
    expect(compileUserSchema(lookupOrder)({ orderId: 'A-1' })).toBe('/orderId must match pattern "^[A-Z]-\\d{4}$"');
    expect(compileUserSchema(lookupOrder)({})).toBe("(root) must have required property 'orderId'");
    expect(compileUserSchema(lookupOrder)({ orderId: 'A-1001', extra: 1 })).toBe("(root) has unknown property 'extra'");
    expect(compileUserSchema(lookupOrder)({ orderId: 'A-1001' })).toBe(true);
  });

  it('should leave every other schema to ajv, which still explains an invalid one', () => {
    for (const other of [
      { anyOf: [{ type: 'string' }] },
      { $ref: '#/definitions/x', definitions: { x: {} } },
      { type: 'object', properties: { a: true } },
      { type: 'strin' },
      { type: 'string', pattern: '(' },
      { enum: [] },
      { required: ['a', 'a'] },
      { type: 'array', items: [{ type: 'string' }] },
      { type: 'object', 'x-vendor': 1 },
    ]) {
      expect(compilePlainSchema(other), JSON.stringify(other)).toBeUndefined();
    }
    expect(() => compileUserSchema({ type: 'strin' })).toThrow(/must be equal to one of the allowed values/);
    expect(compileUserSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] })(true)).toBe('(root) must be string; (root) must be number; (root) must match a schema in anyOf');
  });
});
