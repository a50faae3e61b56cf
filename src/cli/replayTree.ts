import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { ExitCode } from './exitCodes.js';
import { natsUrl } from './natsOptions.js';
import { line, type Output } from './output.js';
import { AgentEventType } from '../events/eventTypes.js';
import { formatRunTree, runTree, type ForkReader, type RunLogReader } from './runTree.js';

/**
 * `redflow replay <log> --tree` (or `<traceId> --nats <url> --tree`): the run and the subagent runs
 * its calls started, down the tree. Embedded, a subagent run's log is `<its trace id>.jsonl`
 * beside its caller's; on a cluster, it is in the stream of the subagent's prefix. A
 * fork is shown under the run it was forked from: the tree starts at the first run of the given
 * run's lineage, and lists under each run the forks of it whose logs are beside one of the lineage's
 * (on a cluster: the forks stored in the prefix's stream).
 */
export async function printRunTree(
  given: string,
  values: Record<string, string | boolean | undefined>,
  json: boolean,
  output: Output,
): Promise<ExitCode> {
  const tree = natsUrl(values) ? await clusterTree(given, values) : await fileTree(path.resolve(given));
  if (json) line(output.out, JSON.stringify(tree, null, 2));
  else for (const text of formatRunTree(tree, output.color)) line(output.out, text);
  return ExitCode.Ok;
}

async function fileTree(logPath: string) {
  const dir = path.dirname(logPath);
  const read: RunLogReader = async (traceId) => readIfThere(() => readJsonlLog(path.join(dir, `${traceId}.jsonl`)));
  // Up the lineage to its first run (a fork's run.forked names its parent's log), no further than a few dozen forks.
  let events = (await readJsonlLog(logPath)).events;
  const dirs = new Set([dir]);
  for (let depth = 0; depth < 32; depth++) {
    const forked = events[1];
    if (forked?.type !== AgentEventType.RunForked || forked.data.parent.log === undefined) break;
    const parentLog = forked.data.parent.log;
    const parent = await readIfThere(() => readJsonlLog(parentLog));
    if (parent === undefined || parent.length === 0) break;
    dirs.add(path.dirname(parentLog));
    events = parent;
  }
  return runTree(events, read, [], await forksIn([...dirs]));
}

/** The forks among the logs in `dirs`, by the trace id of the run each was forked from. */
async function forksIn(dirs: readonly string[]): Promise<ForkReader> {
  const byParent = new Map<string, (readonly AgentEvent[])[]>();
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((file) => file.endsWith('.jsonl'))) {
      const events = await readIfThere(() => readJsonlLog(path.join(dir, name))).catch(() => undefined);
      const forked = events?.[1];
      if (events === undefined || forked?.type !== AgentEventType.RunForked) continue;
      byParent.set(forked.data.parent.traceId, [...(byParent.get(forked.data.parent.traceId) ?? []), events]);
    }
  }
  return async (traceId) => byParent.get(traceId) ?? [];
}

async function clusterTree(traceId: string, values: Record<string, string | boolean | undefined>) {
  const { connectFromOptions, subjectPrefix } = await import('./natsOptions.js');
  const { clusterRunLogs } = await import('../nats/cluster/subagentRunPrefix.js');
  const { subagentPrefix } = await import('../nats/cluster/clusterSubagents.js');
  const { stopWithin } = await import('./stopWithin.js');
  const prefix = subjectPrefix(values);
  const nc = await connectFromOptions(values, 'redflow-replay');
  const logs = clusterRunLogs(nc);
  try {
    const readOn = (on: string, id: string) => readIfThere(async () => (await logs.storeOf(on)).read(id));
    const read: RunLogReader = (id, tools) => readOn(tools.reduce(subagentPrefix, prefix), id);
    let root = await readOn(prefix, traceId);
    if (root === undefined) throw new RedflowError({ code: ErrorCode.LOG_NOT_FOUND, message: `no run ${traceId} on prefix ${prefix}`, hint: 'check the trace id and --prefix' });
    // Up the lineage to its first run in the stream (a fork's run.forked names its parent), as for logs.
    for (let depth = 0; depth < 32; depth++) {
      const forked = root[1];
      if (forked?.type !== AgentEventType.RunForked) break;
      const parent = await readOn(prefix, forked.data.parent.traceId);
      if (parent === undefined || parent.length === 0) break;
      root = parent;
    }
    const { listRunForks } = await import('../nats/serve/natsRunForks.js');
    const forks = await listRunForks(nc, prefix);
    const forksOf: ForkReader = async (parent) => {
      const logs = await Promise.all((forks.get(parent) ?? []).map((id) => readOn(prefix, id)));
      return logs.filter((events): events is readonly AgentEvent[] => events !== undefined && events.length > 0);
    };
    return await runTree(root, read, [], forksOf);
  } finally {
    await logs.close();
    await stopWithin([], nc);
  }
}

/**
 * The events a read finds, or undefined when there is no such log. Any other failure (a stream this
 * user may not read, a store that is down) is thrown, so the tree says why instead of "no log".
 */
async function readIfThere(read: () => Promise<{ readonly events: readonly AgentEvent[] }>): Promise<readonly AgentEvent[] | undefined> {
  try {
    return (await read()).events;
  } catch (error) {
    if (error instanceof RedflowError && error.code === ErrorCode.LOG_NOT_FOUND) return undefined;
    throw error;
  }
}
