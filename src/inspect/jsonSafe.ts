/**
 * The deepest nesting {@link toJsonSafe} keeps. Envelopes hold tool outputs of any shape, so the
 * limit is generous; anything deeper is replaced by a marker rather than failing the message.
 */
export const JSON_SAFE_MAX_DEPTH = 64;

/** What replaces a value nested deeper than the depth limit. */
export const TOO_DEEP = '[too deep]';
/** What replaces a reference back to an object that contains it. */
export const CIRCULAR = '[circular]';
/** What replaces a value whose getter or `toJSON` throws. */
export const UNREADABLE = '[unreadable]';

/**
 * A copy of `value` that `JSON.stringify` turns into the same text everywhere and that never
 * throws: what goes over the wire to the inspector must survive whatever a statechart's context
 * holds. Functions become `{ type: name }` (what @statelyai/inspect itself does, so the machine
 * definition's inline guards and actions still show by name), `Set`s become arrays, `Map`s objects,
 * bigints strings, non-finite numbers `null`, `undefined` members disappear, `toJSON` is honoured
 * (XState snapshots and actor refs have one), cycles and over-deep nesting become markers.
 *
 * @example
 * ```ts
 * toJsonSafe({ rules: new Set(['a']), effects: () => 1 }) // { rules: ['a'], effects: { type: 'effects' } }
 * ```
 */
export function toJsonSafe(value: unknown, maxDepth: number = JSON_SAFE_MAX_DEPTH): unknown {
  // Only the objects on the current path count as cycles: a value shared by two members is copied twice.
  const path = new Set<object>();
  const walk = (current: unknown, depth: number): unknown => {
    switch (typeof current) {
      case 'string':
      case 'boolean':
        return current;
      case 'number':
        return Number.isFinite(current) ? current : null;
      case 'bigint':
        return current.toString();
      case 'function':
        return { type: current.name || 'anonymous' };
      case 'undefined':
      case 'symbol':
        return undefined;
    }
    if (current === null) return null;
    const object = current as object;
    if (depth >= maxDepth) return TOO_DEEP;
    if (path.has(object)) return CIRCULAR;
    path.add(object);
    try {
      if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
        const json: unknown = (object as { toJSON(): unknown }).toJSON();
        // A toJSON that returns its own object would recurse forever: take its members instead.
        return json === object ? copyMembers(object, depth, walk) : walk(json, depth);
      }
      if (object instanceof Map) {
        const members: Record<string, unknown> = {};
        for (const [key, member] of object) {
          const safe = walk(member, depth + 1);
          if (safe !== undefined) members[String(key)] = safe;
        }
        return members;
      }
      if (object instanceof Set) return [...object].map((member) => walk(member, depth + 1) ?? null);
      if (Array.isArray(object)) return object.map((member) => walk(member, depth + 1) ?? null);
      if (object instanceof Error) return { name: object.name, message: object.message };
      return copyMembers(object, depth, walk);
    } catch {
      // A getter or a toJSON that throws: the message still goes, with this one value left out.
      return UNREADABLE;
    } finally {
      path.delete(object);
    }
  };
  return walk(value, 0);
}

function copyMembers(object: object, depth: number, walk: (value: unknown, depth: number) => unknown): Record<string, unknown> {
  const members: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(object)) {
    const safe = walk(member, depth + 1);
    // Defined as data properties: a key named __proto__ stays a key and changes no prototype.
    if (safe !== undefined) Object.defineProperty(members, key, { value: safe, enumerable: true, writable: true, configurable: true });
  }
  return members;
}
