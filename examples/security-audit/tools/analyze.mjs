// The `analyze` tool: scans the audited code for patterns that are dangerous as written.
import { readCodebase } from './codebase.mjs';

// One pattern per risk; each says why a match is one.
const SECURITY_PATTERNS = [
  { id: 'eval_with_variable', pattern: /\beval\(\s*[A-Za-z_$][\w$.]*\s*\)/, why: 'eval() runs a value that comes from a variable: code injection' },
  { id: 'innerhtml_unsanitized', pattern: /\.innerHTML\s*=\s*(?!['"`])/, why: 'innerHTML is assigned a value that is not sanitized: cross-site scripting' },
  { id: 'sql_concatenation', pattern: /\b(SELECT|INSERT|UPDATE|DELETE)\b[^;]*['"]\s*\+/i, why: 'SQL built by string concatenation: SQL injection' },
];

export default {
  name: 'analyze',
  description: 'Scans the audited code for risky patterns and returns each finding with its file and line.',
  inputSchema: {
    type: 'object',
    required: ['target', 'focus'],
    additionalProperties: false,
    properties: {
      target: { type: 'string', enum: ['code'], description: 'what to scan: the audited code' },
      focus: { type: 'string', enum: ['security_patterns'], description: 'which patterns to look for' },
    },
  },
  async execute() {
    const findings = [];
    for (const { file, lines } of await readCodebase()) {
      lines.forEach((text, i) => {
        for (const { id, pattern, why } of SECURITY_PATTERNS) {
          if (pattern.test(text)) findings.push({ file, line: i + 1, pattern: id, why, code: text.trim() });
        }
      });
    }
    return { findings };
  },
};
