// The `search` tool: looks for a regular expression in the code, to find a mitigation (or none).
import { readCodebase } from './codebase.mjs';

export default {
  name: 'search',
  description: 'Searches the whole codebase for a regular expression (case-insensitive) and returns every matching line.',
  inputSchema: {
    type: 'object',
    required: ['query', 'scope'],
    additionalProperties: false,
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 200, description: 'a regular expression, like sanitize|escape' },
      scope: { type: 'string', enum: ['full_codebase'] },
    },
  },
  async execute({ query }) {
    // A bad expression throws: the call fails and the model reads why.
    const pattern = new RegExp(query, 'i');
    const matches = [];
    for (const { file, lines } of await readCodebase()) {
      lines.forEach((text, i) => {
        if (pattern.test(text)) matches.push({ file, line: i + 1, code: text.trim() });
      });
    }
    return { query, matches, count: matches.length };
  },
};
