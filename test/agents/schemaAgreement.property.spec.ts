import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkAgainst, describeIssue } from '../../src/agents/schemaCheck.js';
import { jsonSchemaOf } from '../../src/agents/schemaToJson.js';
import { compileUserSchema } from '../../src/contracts/schemas.js';

// The two checks of a definition's Standard Schema agree: the run checks the JSON Schema the model
// is shown, the tool the schema itself. For schemas JSON Schema can say whole (no refinement), they
// must take and refuse the same values, or a model would be told one thing and held to another.

/** A zod schema of primitives, enums, arrays, nullables and objects with optional members, a few levels deep. */
const zodSchema: fc.Arbitrary<z.ZodType> = fc.letrec<{ schema: z.ZodType }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<z.ZodType>(z.string(), z.number(), z.number().int(), z.boolean(), z.null(), z.string().min(2), z.number().min(0).max(10)),
    fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }).map((values) => z.enum(values as [string, ...string[]])),
    tie('schema').map((item) => z.array(item)),
    tie('schema').map((item) => item.nullable()),
    fc
      .dictionary(fc.constantFrom('a', 'b', 'c', 'order'), fc.tuple(tie('schema'), fc.boolean()), { maxKeys: 3 })
      .map((members) => z.object(Object.fromEntries(Object.entries(members).map(([key, [schema, optional]]) => [key, optional ? schema.optional() : schema])))),
  ),
})).schema;

/** A JSON value often shaped like what the schemas want: objects of the same keys, small numbers, short strings. */
const value = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, 1, 2.5, -3, 11, '', 'a', 'ab', 'order'),
    fc.string({ maxLength: 3 }),
    fc.integer({ min: -20, max: 20 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'order', 'x'), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('a Standard Schema and the JSON Schema it shows', () => {
  it('should take and refuse the same values when JSON Schema can say the whole schema', async () => {
    await fc.assert(
      fc.asyncProperty(zodSchema, fc.array(value, { minLength: 1, maxLength: 8 }), async (schema, values) => {
        const shown = jsonSchemaOf(schema);
        expect(shown.ok).toBe(true);
        if (!shown.ok) return;
        // Plain JSON, as the log holds it.
        expect(JSON.parse(JSON.stringify(shown.schema))).toEqual(shown.schema);
        const runCheck = compileUserSchema(shown.schema);
        for (const candidate of values) {
          const bySchema = (await checkAgainst(schema, candidate)).ok;
          expect(runCheck(candidate) === true, `${JSON.stringify(shown.schema)} on ${JSON.stringify(candidate)}`).toBe(bySchema);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('should say where each issue is as a JSON Pointer that leads back to its path', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.nat(), fc.string().map((key) => ({ key }))), { maxLength: 6 }), fc.string(), (path, message) => {
        const line = describeIssue({ message, path });
        const keys = path.map((segment) => String(typeof segment === 'object' ? segment.key : segment));
        const pointer = keys.length === 0 ? '(root)' : keys.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
        expect(line).toBe(`${pointer}: ${message}`);
        const back = keys.length === 0 ? [] : pointer.slice(1).split('/').map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
        expect(back).toEqual(keys);
      }),
    );
  });
});
