import { describe, expect, it } from 'vitest';
import { formatStep } from '../../src/cli/timeline.js';

describe('formatStep', () => {
  it('should end the line of a final answer sent back (a failed verification) with ✖ and its code', () => {
    expect(formatStep({ iteration: 2, action: 'final', durationMs: 3, code: 'VERIFICATION_FAILED' }, false)).toMatch(/^ {2}#2 {2}final\s+3 ms {2}✖ VERIFICATION_FAILED$/);
    expect(formatStep({ iteration: 3, action: 'final', confidence: 0.9, durationMs: 3 }, false)).not.toContain('✖');
  });

  it('should end a failed tool call’s line with ✖ and its code, in red with colour', () => {
    const failed = { iteration: 1, action: 'tool' as const, tool: 'forecast', confidence: 0.6, durationMs: 22, code: 'TOOL_TIMEOUT' };
    expect(formatStep(failed, false)).toMatch(/^ {2}#1 {2}tool {3}forecast\s+conf 0\.60\s+22 ms {2}✖ TOOL_TIMEOUT$/);
    expect(formatStep(failed, true)).toContain('\u001b[31m✖ TOOL_TIMEOUT\u001b[0m');
  });

  it('should keep the tool’s name on the error line of a run that ended during its call, and end it with ✖ and the code', () => {
    const ended = { iteration: 2, action: 'error' as const, tool: 'forecast', confidence: 0.6, code: 'RUN_TIMEOUT' };
    expect(formatStep(ended, false)).toMatch(/^ {2}#2 {2}error {2}forecast\s+conf 0\.60\s+✖ RUN_TIMEOUT$/);
  });

  it('should leave a tool call that succeeded, and an error line, without the mark', () => {
    expect(formatStep({ iteration: 1, action: 'tool', tool: 'forecast', confidence: 0.6, durationMs: 22 }, false)).not.toContain('✖');
    expect(formatStep({ iteration: 2, action: 'error', code: 'INVALID_JSON' }, false)).not.toContain('✖');
  });
});
