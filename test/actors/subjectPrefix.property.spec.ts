import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Storage, isSubjectPrefix } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';

// Tenants are kept apart by their prefix: two prefixes Redflow accepts must never share a stream
// or a bucket, and a prefix that could share one is refused before any name is made from it.

/**
 * Prefixes as anyone might type them, from a small alphabet so that near-misses (`a.b`, `a_b`,
 * `A.b`, `a-b`) come up often: letters of both cases, `_`, `-`, dots between tokens.
 */
const anyPrefix = fc.stringMatching(/^[aAb_-]{1,3}(\.[aAb_-]{1,3}){0,2}$/);

/** Every JetStream name a prefix gets, by kind. */
const names = (prefix: string) => [
  Storage.traceStream(prefix),
  // A KV bucket is the stream KV_<bucket>: compare streams with streams.
  ...[Storage.runsBucket, Storage.leasesBucket, Storage.toolResultsBucket, Storage.memoryBucket].map((bucket) => `KV_${bucket(prefix)}`),
];

describe('subject prefixes and their stream and bucket names', () => {
  it('should give two different accepted prefixes no name in common', () => {
    fc.assert(
      fc.property(anyPrefix, anyPrefix, (a, b) => {
        fc.pre(a !== b && isSubjectPrefix(a) && isSubjectPrefix(b));
        const shared = names(a).filter((name) => names(b).includes(name));
        expect(shared).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it('should give one prefix five different names', () => {
    fc.assert(
      fc.property(anyPrefix, (prefix) => {
        fc.pre(isSubjectPrefix(prefix));
        expect(new Set(names(prefix)).size).toBe(5);
      }),
    );
  });

  it('should refuse, with SUBJECT_PREFIX_INVALID, every prefix that is not accepted', () => {
    fc.assert(
      fc.property(anyPrefix, (prefix) => {
        fc.pre(!isSubjectPrefix(prefix));
        expect(() => Storage.traceStream(prefix)).toThrow(expect.objectContaining({ code: ErrorCode.SUBJECT_PREFIX_INVALID }));
        expect(() => Storage.memoryBucket(prefix)).toThrow(expect.objectContaining({ code: ErrorCode.SUBJECT_PREFIX_INVALID }));
      }),
    );
  });

  it('should accept the default and the usual tenant prefixes, and refuse those that collide with them', () => {
    for (const prefix of ['redflow', 'acme.prod', 'acme-prod', 'rftest.0a1b2c', 't1.eu-west.prod']) expect(isSubjectPrefix(prefix), prefix).toBe(true);
    for (const prefix of ['acme_prod', 'Acme', 'acme.Prod', 'REDFLOW', '', '.acme', 'acme.', 'acme..prod', 'acme prod', 'acme.*', 'acme.>']) {
      expect(isSubjectPrefix(prefix), prefix).toBe(false);
    }
  });
});
