import path from 'node:path';
import { ErrorCode, RedflowError } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { ExitCode } from './exitCodes.js';
import { natsUrl } from './natsOptions.js';
import { line, type Output } from './output.js';
import { formatRunTree, runTree, type RunLogReader } from './runTree.js';

/**
 * `redflow replay <log> --tree` (or `<traceId> --nats <url> --tree`): the run and the subagent runs
 * its calls started, down the tree. Embedded, a subagent run's log is `<its trace id>.jsonl`
 * beside its caller's; on a cluster, it is in the stream of the subagent's prefix.
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
  return runTree((await readJsonlLog(logPath)).events, read);
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
    const root = await readOn(prefix, traceId);
    if (root === undefined) throw new RedflowError({ code: ErrorCode.LOG_NOT_FOUND, message: `no run ${traceId} on prefix ${prefix}`, hint: 'check the trace id and --prefix' });
    return await runTree(root, read);
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
