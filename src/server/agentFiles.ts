import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { parseAgentMarkdown } from '../agents/agentMarkdown.js';
import type { FlowSummary } from './apiTypes.js';
import { flowIdProblem } from './flowIds.js';
import { assertRealInside, walk } from './flowDirFiles.js';

// The `.agent.md` agents of a flows directory (docs/agent-markdown.md): listed beside the flows by
// `GET /api/flows` and run by `POST /api/runs` as an agent definition runs.

/** How an agent file's name ends; its id is its path in the directory, this ending included. */
export const AGENT_FILE_EXTENSION = '.agent.md';

/** Largest agent file the listing reads for its name and description. */
const MAX_AGENT_FILE_BYTES = 256 * 1024;

/**
 * True when a flow id names an `.agent.md` agent rather than a flow file.
 *
 * @example
 * ```ts
 * isAgentId('review/reviewer.agent.md') // true
 * ```
 */
export function isAgentId(id: string): boolean {
  return id.endsWith(AGENT_FILE_EXTENSION);
}

/**
 * The `.agent.md` files of `dir`, as the flow listing shows them: `kind: "agent"`, the name and
 * description of their front matter, and `valid` when the front matter reads (its tools are
 * checked when it runs).
 *
 * @example
 * ```ts
 * const agents = await listAgentFiles('flows'); // [{ id: 'reviewer.agent.md', kind: 'agent', … }]
 * ```
 */
export async function listAgentFiles(dir: string): Promise<FlowSummary[]> {
  const files = await walk(dir, '', 0, [], AGENT_FILE_EXTENSION);
  const summaries: FlowSummary[] = [];
  for (const relative of files) {
    const id = relative.split(path.sep).join('/');
    if (flowIdProblem(id) !== undefined) continue;
    const file = path.join(dir, relative);
    const stats = await stat(file).catch(() => undefined);
    if (stats === undefined) continue;
    const base = { id, kind: 'agent' as const, updatedAt: stats.mtime.toISOString() };
    if (stats.size > MAX_AGENT_FILE_BYTES) {
      summaries.push({ ...base, valid: false });
      continue;
    }
    try {
      const { frontMatter } = parseAgentMarkdown(await readFile(file, 'utf8'), id);
      const { name, description } = frontMatter;
      summaries.push({ ...base, ...(typeof name === 'string' && { name }), ...(typeof description === 'string' && { description }), valid: true });
    } catch {
      summaries.push({ ...base, valid: false });
    }
  }
  return summaries;
}

/**
 * The absolute path of the agent file `id` names inside `dir` (links leading outside refused);
 * 404 `FLOW_NOT_FOUND` when there is none.
 *
 * @example
 * ```ts
 * const file = await agentFilePath('flows', 'reviewer.agent.md');
 * ```
 */
export async function agentFilePath(dir: string, id: string): Promise<string> {
  const problem = flowIdProblem(id);
  if (problem !== undefined || !isAgentId(id)) {
    throw new ApiError(errorInfo(ErrorCode.FLOW_ID_INVALID, `"${id}" is not an agent file's id${problem === undefined ? '' : `: ${problem}`}`, { hint: 'GET /api/flows lists the agents (kind "agent") with their ids' }));
  }
  const file = path.join(dir, ...id.split('/'));
  await assertRealInside(dir, file, id);
  const isFile = await stat(file).then((stats) => stats.isFile(), () => false);
  if (!isFile) {
    throw new ApiError(errorInfo(ErrorCode.FLOW_NOT_FOUND, `the agent "${id}" does not exist`, { hint: 'GET /api/flows lists the flows and agents of the flows directory' }));
  }
  return file;
}

/**
 * The id of an agent file path inside `dir`, if it is one (a run's log names its file).
 *
 * @example
 * ```ts
 * agentIdOfPath('/srv/flows', '/srv/flows/review/reviewer.agent.md') // 'review/reviewer.agent.md'
 * ```
 */
export function agentIdOfPath(dir: string, file: string): string | undefined {
  const relative = path.relative(path.resolve(dir), path.resolve(file));
  if (relative.startsWith('..') || path.isAbsolute(relative) || !isAgentId(relative)) return undefined;
  const id = relative.split(path.sep).join('/');
  return flowIdProblem(id) === undefined ? id : undefined;
}
