/**
 * The body of a save with its `id` set to the id it is saved under, first. A flow's id is its
 * path, for every client: a document keeping another id (the editor's "my-flow" of a new flow,
 * a copy of another file) would run under a name no file has, and a cluster's workers, which
 * run the file under its own id, would refuse its runs (`FLOW_MISMATCH`). A body that is not an
 * object is returned as it is, for the schema check to refuse.
 *
 * @example
 * ```ts
 * withPathId({ id: 'my-flow', nodes: [], edges: [] }, 'newcomer/first'); // { id: 'newcomer/first', nodes: [], edges: [] }
 * ```
 */
export function withPathId(body: unknown, id: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { id: _sent, ...rest } = body as Record<string, unknown>;
  return { id, ...rest };
}
