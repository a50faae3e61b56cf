import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTextAction, parseToolSignatures } from '../../src/validation/actionSyntax.js';

describe('parseTextAction', () => {
  it('reads a thought and a call with named string arguments, keeping the action as written', () => {
    const result = parseTextAction('Thought: I need the login code.\nAction: code_search(query="authentication login")\n');
    expect(result).toEqual({
      kind: 'tool',
      tool: 'code_search',
      input: { query: 'authentication login' },
      raw: 'Action: code_search(query="authentication login")',
      thought: 'I need the login code.',
    });
  });

  it('reads numbers, booleans, null, single quotes, escapes and JSON arguments', () => {
    const result = parseTextAction(`Action: search(q='it\\'s "here"\\n', limit=5, exact=False, scope=None, tags=["a", "b"], where={"x": 1})`);
    expect(result).toMatchObject({
      kind: 'tool',
      tool: 'search',
      input: { q: 'it\'s "here"\n', limit: 5, exact: false, scope: null, tags: ['a', 'b'], where: { x: 1 } },
    });
  });

  it('names positional arguments from the tool list the prompt declared', () => {
    const signatures = parseToolSignatures('You have access to: code_search(query), read_file(path)');
    expect(parseTextAction('Action: read_file("src/auth.js")', signatures)).toMatchObject({ kind: 'tool', tool: 'read_file', input: { path: 'src/auth.js' } });
  });

  it('refuses a positional argument no declaration names', () => {
    expect(parseTextAction('Action: read_file("src/auth.js")')).toMatchObject({ kind: 'malformed', problem: expect.stringContaining('has no name') });
  });

  it('says what is wrong with a call it cannot read', () => {
    expect(parseTextAction('Action: code_search(query="open')).toMatchObject({ kind: 'malformed', problem: 'a quoted value is not closed' });
    expect(parseTextAction('Action: code_search(query=open)')).toMatchObject({ kind: 'malformed', problem: expect.stringContaining('quote strings') });
    expect(parseTextAction('Action: code_search')).toMatchObject({ kind: 'malformed', problem: expect.stringContaining('no argument list') });
    expect(parseTextAction('Action: (x=1)')).toMatchObject({ kind: 'malformed' });
    expect(parseTextAction('Action: f(a=1, a=2)')).toMatchObject({ kind: 'malformed', problem: 'argument "a" is given twice' });
  });

  it('reads the Action / Action Input shape', () => {
    expect(parseTextAction('Action: code_search\nAction Input: {"query": "auth"}')).toMatchObject({
      kind: 'tool',
      tool: 'code_search',
      input: { query: 'auth' },
      raw: 'Action: code_search\nAction Input: {"query": "auth"}',
    });
    expect(parseTextAction('Action: code_search\nAction Input: [1]')).toMatchObject({ kind: 'malformed' });
  });

  it('takes only the first action when the model goes on to imagine an observation', () => {
    const result = parseTextAction('Action: lookup(id="A-1")\nObservation: shipped\nAction: lookup(id="A-2")');
    expect(result).toMatchObject({ kind: 'tool', input: { id: 'A-1' }, raw: 'Action: lookup(id="A-1")' });
  });

  it('reads a final answer, and plain text as a direct answer', () => {
    expect(parseTextAction('Thought: I know this.\nFinal Answer: It uses JWTs.')).toEqual({ kind: 'final', message: 'It uses JWTs.', thought: 'I know this.' });
    expect(parseTextAction('Authentication lives in auth.js.')).toEqual({ kind: 'final', message: 'Authentication lives in auth.js.' });
  });

  it('reads back any call written from a tool name and named JSON-like values', () => {
    const key = fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/);
    const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }));
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.dictionary(key, value, { maxKeys: 5 }), (tool, input) => {
        const args = Object.entries(input).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
        const result = parseTextAction(`Thought: go\nAction: ${tool}(${args})\nObservation: …`);
        expect(result).toMatchObject({ kind: 'tool', tool, raw: `Action: ${tool}(${args})` });
        expect((result as { input: unknown }).input).toEqual(input);
      }),
    );
  });

  it('never throws, whatever the model writes', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (before, after) => {
        const result = parseTextAction(`${before}Action: ${after}`);
        expect(['tool', 'final', 'malformed']).toContain(result.kind);
      }),
    );
  });
});

describe('parseToolSignatures', () => {
  it('reads names and parameters from a bulleted tool list, once each', () => {
    const segment = [
      'You have access to the following tools:',
      '- code_search(query="search terms") - Search for code matching the query',
      '- read_file(path="file/path") - Read the contents of a specific file',
      '- write_file(path="file/path", content="new content") - Write content to a file',
      'Format: Action: tool_name(param="value")',
    ].join('\n');
    expect(parseToolSignatures(segment).map(({ name, params }) => ({ name, params }))).toEqual([
      { name: 'code_search', params: ['query'] },
      { name: 'read_file', params: ['path'] },
      { name: 'write_file', params: ['path', 'content'] },
    ]);
  });

  it('takes no tool from an instruction: a format line, an example, an `Action:` showing the syntax', () => {
    const segment = [
      'Tools: code_search(query) - Search the code. Example: code_search(query="login")',
      '- read_file(path: string): Read a file, e.g. read_file(path="src/a.js") or open_file(path="b")',
      'Example: list_dir(path=".")',
      'Respond in this format: Action: tool_name(param="value")',
      'Format: Action: other_tool(x=1)',
    ].join('\n');
    expect(parseToolSignatures(segment).map(({ name, params }) => ({ name, params }))).toEqual([
      { name: 'code_search', params: ['query'] },
      { name: 'read_file', params: ['path'] },
    ]);
    expect(parseToolSignatures(segment).map((signature) => signature.line)).toEqual([
      'Tools: code_search(query) - Search the code. Example: code_search(query="login")',
      '- read_file(path: string): Read a file, e.g. read_file(path="src/a.js") or open_file(path="b")',
    ]);
  });
});
