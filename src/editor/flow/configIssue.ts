// Its own file because both the schema checks (configSchemas.ts) and the stop conditions' range
// checks (stopConditions.ts, which configSchemas.ts runs) produce it: neither imports the other for it.

/**
 * One problem of a node's config: the field it is about (top-level key), if any, and what is wrong.
 * A problem inside the field (an array entry, a nested property) also has its `path` below the
 * field (`['0', 'value']` for `stopConditions[0].value`) and its `detail`: the message without
 * that location, for a control that already shows where it is.
 */
export interface ConfigIssue {
  readonly field?: string;
  readonly message: string;
  readonly path?: readonly string[];
  readonly detail?: string;
}
