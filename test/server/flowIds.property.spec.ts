// Flow ids come straight from URLs: whatever the string, it is either refused with
// FLOW_ID_INVALID or names a .json file inside the flows directory, and a file's id maps back to it.
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { FLOW_FILE_EXTENSION, flowFilePath, flowIdOfPath, isInside } from '../../src/server/flowIds.js';

const FLOWS_DIR = path.resolve('/srv/redflow/flows');

/** Strings built from the characters that matter to paths, plus anything at all. */
const hostileId = fc.oneof(
  fc.string({ unit: fc.constantFrom('.', '/', '\\', '%', '2', 'e', 'a', '-', '_', '\0', ' ', ':', '~'), maxLength: 24 }),
  fc.array(fc.constantFrom('..', '.', '', 'a', '.hidden', 'x.', 'flows', '%2e%2e', 'C:', '~'), { maxLength: 6 }).map((parts) => parts.join('/')),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

function fileOf(id: string): string | RedflowError {
  try {
    return flowFilePath(FLOWS_DIR, id);
  } catch (error) {
    if (error instanceof RedflowError) return error;
    throw error;
  }
}

describe('flow ids', () => {
  it('either refuse an id with FLOW_ID_INVALID or name a .json file inside the flows directory', () => {
    fc.assert(
      fc.property(hostileId, (id) => {
        const file = fileOf(id);
        // Refused, it is with FLOW_ID_INVALID.
        expect([undefined, ErrorCode.FLOW_ID_INVALID]).toContain(file instanceof RedflowError ? file.code : undefined);
        if (file instanceof RedflowError) return;
        expect(isInside(FLOWS_DIR, file)).toBe(true);
        expect(file.endsWith(FLOW_FILE_EXTENSION)).toBe(true);
        expect(path.basename(file).startsWith('.')).toBe(false);
        expect(flowIdOfPath(FLOWS_DIR, file)).toBe(id);
      }),
      { numRuns: 2000 },
    );
  });

  it('accept every id made of safe segments, at most three folders deep', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,20}[A-Za-z0-9_-]$/).filter((s) => !s.includes('..'));
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        const id = segments.join('/');
        const file = fileOf(id);
        expect(file).not.toBeInstanceOf(RedflowError);
        expect(file).toBe(path.join(FLOWS_DIR, ...segments) + FLOW_FILE_EXTENSION);
      }),
    );
  });
});
