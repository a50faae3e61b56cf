import { describe, expect, it } from 'vitest';
import { parseSqlParameters, undeclaredParameters } from '../../src/actors/tools/sqlParameters.js';

function parsed(sql: string) {
  const result = parseSqlParameters(sql);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(sql)} to parse: ${result.message}`);
  return result.sql;
}

describe('parseSqlParameters', () => {
  it('should number named parameters in order of first use, one number per name', () => {
    expect(parsed('select * from t where a = :a and b = :b_2 or a2 = :a')).toEqual({
      text: 'select * from t where a = $1 and b = $2 or a2 = $1',
      parameters: ['a', 'b_2'],
      keyword: 'select',
    });
  });

  it('should leave names inside strings, quoted identifiers, comments and dollar quotes alone', () => {
    const sql = [
      "select ':no1', 'it''s :no2', E'\\' :no3', \":no4\"",
      '-- :no5',
      '/* :no6 /* nested :no7 */ still :no8 */',
      '$$ :no9 $$, $tag$ :no10 $ $tag$, :yes',
    ].join('\n');
    const sql2 = parsed(sql);
    expect(sql2.parameters).toEqual(['yes']);
    expect(sql2.text).toBe(sql.replace(':yes', '$1'));
  });

  it('should treat ::type as a cast, and a colon after a word (a slice) as no parameter', () => {
    expect(parsed('select :id::text, x::int, arr[lo:hi], arr[1:2], a := 1').parameters).toEqual(['id']);
    expect(parsed('select :id::text').text).toBe('select $1::text');
  });

  it('should find the first keyword past comments and parentheses', () => {
    expect(parsed('-- hi\n/* x */ (SELECT 1)').keyword).toBe('select');
    expect(parsed('  With x as (select 1) table x').keyword).toBe('with');
    expect(parsed('insert into t values (:v)').keyword).toBe('insert');
  });

  it('should drop a trailing semicolon but refuse a second statement', () => {
    expect(parsed('select 1; -- done\n').text).toBe('select 1');
    expect(parsed('select 1;;').text).toBe('select 1');
    expect(parseSqlParameters('select 1; drop table t')).toMatchObject({ ok: false, index: 8 });
    expect(parsed("select ';drop table t'").text).toBe("select ';drop table t'");
  });

  it.each([
    ["select 'open", 'unterminated string literal'],
    ['select "open', 'unterminated quoted identifier'],
    ['select 1 /* open /* */', 'unterminated /* comment'],
    ['select $q$ open', 'unterminated $q$ string'],
    ['select * from t where id = $1', 'positional parameters'],
  ])('should refuse %j', (sql, message) => {
    const result = parseSqlParameters(sql);
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining(message) });
  });

  it('should keep a $ inside an identifier', () => {
    expect(parsed('select a$1, b$x$ from t where c = :c').parameters).toEqual(['c']);
  });
});

describe('undeclaredParameters', () => {
  it('should list the parameters the schema does not declare', () => {
    const schema = { type: 'object', properties: { id: { type: 'string' } } };
    expect(undeclaredParameters(['id', 'limit'], schema)).toEqual(['limit']);
    expect(undeclaredParameters(['toString'], { type: 'object' })).toEqual(['toString']);
    expect(undeclaredParameters([], null)).toEqual([]);
  });
});
