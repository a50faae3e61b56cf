import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { ApiRoute, type RunStartedResponse } from './apiTypes.js';
import type { FlowStore } from './flowStore.js';
import type { RunBackend } from './runBackend.js';

export { isAgentId } from './agentFiles.js';

/**
 * Starts a run of the `.agent.md` agent `agentId` of the flows directory (`POST /api/runs` with
 * `flow` an agent's id): its input is the object of its inputs (none: `{}`). Answers what the
 * route sends: 201 with the run's trace id and where it is.
 *
 * @example
 * ```ts
 * const [status, body, headers] = await startAgentRun(context, 'reviewer.agent.md', { topic: 'auth' });
 * ```
 */
export async function startAgentRun(context: { readonly flows: FlowStore; readonly backend: RunBackend }, agentId: string, input: unknown): Promise<[201, RunStartedResponse, Record<string, string>]> {
  const { flows, backend } = context;
  if (flows.agentPath === undefined || backend.startAgent === undefined) {
    throw new ApiError(
      errorInfo(ErrorCode.FLOW_NOT_FOUND, `"${agentId}" is an agent file's id, and this server runs no agent files`, {
        hint: 'agent files (.agent.md) run on a server with a flows directory and embedded runs (redflow serve --flows <dir>)',
      }),
    );
  }
  const inputs = input === undefined || input === '' ? {} : input;
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
    throw new ApiError(
      errorInfo(ErrorCode.HTTP_BODY_INVALID, 'an agent file takes its input as a JSON object of its inputs', {
        hint: 'send "input": { "<name>": <value>, … } with the inputs its front matter declares (or none)',
      }),
    );
  }
  const agentPath = await flows.agentPath(agentId);
  const { traceId } = await backend.startAgent({ agentId, agentPath, inputs: inputs as Record<string, unknown> });
  return [201, { traceId, flow: agentId }, { Location: ApiRoute.run(traceId) }];
}
