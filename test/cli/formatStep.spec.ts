import { describe, expect, it } from 'vitest';
import { formatStep } from '../../src/cli/timeline.js';

describe('formatStep', () => {
  it('should end a failed tool call’s line with ✖ and its code, in red with colour', () => {
    const failed = { iteration: 1, action: 'tool' as const, tool: 'forecast', confidence: 0.6, durationMs: 22, code: 'TOOL_TIMEOUT' };
    expect(formatStep(failed, false)).toMatch(/^ {2}#1 {2}tool {3}forecast\s+conf 0\.60\s+22 ms {2}✖ TOOL_TIMEOUT$/);
    expect(formatStep(failed, true)).toContain('\u001b[31m✖ TOOL_TIMEOUT\u001b[0m');
  });

  it('should leave a tool call that succeeded, and an error line, without the mark', () => {
    expect(formatStep({ iteration: 1, action: 'tool', tool: 'forecast', confidence: 0.6, durationMs: 22 }, false)).not.toContain('✖');
    expect(formatStep({ iteration: 2, action: 'error', code: 'INVALID_JSON' }, false)).not.toContain('✖');
  });
});
