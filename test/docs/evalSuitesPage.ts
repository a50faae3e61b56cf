import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The changes docs/eval-suites.md makes, in `dir`, before it runs its suite against the changed
 * flow: its edited case (a YAML block), written where its `# <path>` line says, and
 * `flow.changed.json`, the example's flow with the nodes its JSON block shows changed.
 */
export async function makePageChanges(dir: string, editedCase: string, changedNodes: string): Promise<void> {
  await writeFile(path.join(dir, /^# (\S+)/.exec(editedCase)?.[1] ?? 'missing'), editedCase);
  const flow = JSON.parse(await readFile(path.join(dir, 'examples', 'order-status', 'flow.json'), 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
  const changes = JSON.parse(changedNodes) as Record<string, Record<string, unknown>>;
  flow.nodes = flow.nodes.map((node) => {
    const change = changes[node.id];
    if (change === undefined) return node;
    // The model node's change is its whole config (another model); any other's is merged in.
    return { ...node, config: node.id === 'model' ? change : { ...node.config, ...change } };
  });
  await writeFile(path.join(dir, 'examples', 'order-status', 'flow.changed.json'), JSON.stringify(flow));
}
