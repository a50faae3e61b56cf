import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Storage, Subject, isSubjectPrefix } from '../../src/actors/subjects.js';
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

  it('should give two different accepted prefixes no subject in common, wildcards included', () => {
    const token = fc.constantFrom('a', 'b', 'trace', 'log', 'tool', 'runs', 'model', 'memory', 'x-1');
    const prefix = fc.array(token, { minLength: 1, maxLength: 3 }).map((tokens) => tokens.join('.'));
    /** Every subject a prefix publishes on or serves, and the wildcards it subscribes to or stores. */
    const concrete = (p: string) => [
      Subject.model(p, 'm'),
      Subject.tool(p, 't'),
      Subject.cancel(Subject.tool(p, 't')),
      Subject.memoryLoad(p, 'k'),
      Subject.memoryAppend(p, 'k'),
      Subject.trace(p, 'r1', 'run.started'),
      Subject.log(p, 'r1', 'run.started'),
      Subject.runStart(p),
      Subject.runAbort(p, 'r1'),
    ];
    const wildcards = (p: string) => [Subject.allTraces(p), Subject.runTrace(p, 'r1'), Subject.allLogs(p), Subject.runLog(p, 'r1'), Subject.runAborts(p)];
    const matches = (pattern: string, subject: string) => {
      const [want, have] = [pattern.split('.'), subject.split('.')];
      for (let i = 0; i < want.length; i++) {
        if (want[i] === '>') return have.length > i;
        if (want[i] !== '*' && want[i] !== have[i]) return false;
      }
      return want.length === have.length;
    };
    fc.assert(
      fc.property(prefix, prefix, (a, b) => {
        fc.pre(a !== b && isSubjectPrefix(a) && isSubjectPrefix(b));
        for (const subject of concrete(a)) {
          expect(concrete(b)).not.toContain(subject);
          for (const pattern of wildcards(b)) expect(matches(pattern, subject), `${pattern} ∋ ${subject}`).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
    expect(isSubjectPrefix('acme.trace')).toBe(false);
    expect(isSubjectPrefix('redflow.tool')).toBe(false);
    expect(isSubjectPrefix('trace.acme')).toBe(true);
  });

  it('should accept the default and the usual tenant prefixes, and refuse those that collide with them', () => {
    for (const prefix of ['redflow', 'acme.prod', 'acme-prod', 'rftest.0a1b2c', 't1.eu-west.prod']) expect(isSubjectPrefix(prefix), prefix).toBe(true);
    for (const prefix of ['acme_prod', 'Acme', 'acme.Prod', 'REDFLOW', '', '.acme', 'acme.', 'acme..prod', 'acme prod', 'acme.*', 'acme.>']) {
      expect(isSubjectPrefix(prefix), prefix).toBe(false);
    }
  });
});
