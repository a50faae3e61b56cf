/**
 * NATS subject matching: tokens separated by `.`, `*` matches exactly one token, a final `>`
 * matches one or more tokens.
 *
 * @example
 * ```ts
 * subjectMatches('redflow.trace.>', 'redflow.trace.t1.run.started') // true
 * subjectMatches('redflow.*.x', 'redflow.tool.x') // true
 * ```
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    const token = p[i];
    if (token === '>') return i === p.length - 1 && s.length > i;
    if (i >= s.length) return false;
    if (token !== '*' && token !== s[i]) return false;
  }
  return p.length === s.length;
}
