import { createHash } from 'node:crypto';
import { Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { RemoteTask, follow, reattach, stateName, textOf } from './a2aTaskFollow.js';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import type { AgentA2AConfig } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { registerSecret } from '../../secrets/secrets.js';
import { startDeadline } from '../deadline.js';
import type { ToolContext, ToolDefinition } from '../tool.js';

/** Limit of one call of a remote A2A agent when `timeoutMs` is not set: 5 minutes. */
export const DEFAULT_A2A_TOOL_TIMEOUT_MS = 300_000;

/** Limit of reading the agent card: a remote that does not answer fails validation and run start. */
const CARD_TIMEOUT_MS = 15_000;

/** Limit of the cancel sent after a timeout or an abort: the call must end even if the remote is gone. */
const CANCEL_TIMEOUT_MS = 5_000;

/** Options of {@link connectA2aAgent}. */
export interface A2aToolOptions {
  /** Where `headersFromEnv` are read (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

/** The input schema of every `agent.a2a` tool: one task in words, as for a subagent. */
const INPUT_SCHEMA = {
  type: 'object',
  required: ['task'],
  additionalProperties: false,
  properties: { task: { type: 'string', minLength: 1, description: 'What the remote agent should do, in words.' } },
} as const;

/**
 * Reads a remote A2A agent's card (the SDK's resolver and client, JSON-RPC) and makes the tool the
 * model calls it by: input `{ task }`, description from the node or the card, output the text of
 * the remote task's answer.
 *
 * Each call sends one message whose `messageId` is derived from the call's idempotency key (a call
 * re-sent after a crash sends the same id, so the remote can recognise it) without waiting for
 * the task (`returnImmediately`), follows the task until it ends (`tasks/resubscribe`, or
 * `tasks/get` each second when the remote streams nothing), and returns its artifacts' text (else
 * its status message). Each status and artifact update is the call's activity (`tool_progress`);
 * the task's id goes to the run's log (`tool.attached`) as soon as the remote answers, so a call
 * re-sent after a crash follows that task instead of sending the message again. A task that ends `failed` or
 * `rejected`, or asks a question (`input-required`), fails the call with `A2A_TASK_FAILED`, which
 * the model sees. Past `timeoutMs` the remote task is cancelled and the call fails with
 * `TOOL_TIMEOUT`; when the run is aborted the remote task is cancelled too (`RUN_ABORTED`).
 *
 * @throws RedflowError `A2A_AGENT_UNAVAILABLE` when the card cannot be read; `TOOL_CONFIG_INVALID`
 *   when a `headersFromEnv` variable is not set.
 * @example
 * ```ts
 * const tool = await connectA2aAgent('refunds', { url: 'http://127.0.0.1:8080/a2a/refund-desk/' });
 * await tool.execute({ task: 'Refund order A-1001' }, context); // 'Done: 120 EUR …'
 * ```
 */
export async function connectA2aAgent(name: string, config: AgentA2AConfig, options: A2aToolOptions = {}): Promise<ToolDefinition> {
  const headers = headersOf(name, config, options.env ?? process.env);
  // The token goes to the origin the flow names only: a card naming an endpoint elsewhere gets none.
  const origin = new URL(config.url).origin;
  const withHeaders: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    const target = new URL(input instanceof Request ? input.url : String(input));
    if (target.origin === origin) for (const [header, value] of Object.entries(headers)) merged.set(header, value);
    return fetch(input, { ...init, headers: merged });
  };
  const cardFetch: typeof fetch = (input, init) => withHeaders(input, { ...init, signal: AbortSignal.timeout(CARD_TIMEOUT_MS) });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: withHeaders })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: cardFetch }),
    }),
  );
  let client: Client;
  let card: AgentCard;
  try {
    // A URL naming a .json file is the card itself; otherwise the card is at its well-known path.
    client = config.url.endsWith('.json') ? await factory.createFromUrl(config.url, '') : await factory.createFromUrl(config.url);
    card = client.getAgentCard ? await client.getAgentCard() : ({} as AgentCard);
  } catch (error) {
    throw unavailable(name, config.url, error);
  }
  const timeoutMs = config.timeoutMs ?? DEFAULT_A2A_TOOL_TIMEOUT_MS;
  return {
    name,
    description: config.description ?? (card.description || `Sends a task to the remote agent ${card.name || name} (A2A) and returns its answer.`),
    inputSchema: INPUT_SCHEMA,
    execute: (input, context) => callAgent(client, name, String((input as { task?: unknown }).task ?? ''), context, timeoutMs),
  };
}

/** The headers each request carries, read from the environment now and registered as secrets. */
function headersOf(name: string, config: AgentA2AConfig, env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [header, variable] of Object.entries(config.headersFromEnv ?? {})) {
    const value = env[variable];
    if (value === undefined || value === '') {
      throw new RedflowError(
        errorInfo(ErrorCode.TOOL_CONFIG_INVALID, `A2A agent '${name}': header ${header} takes the environment variable ${variable}, which is not set`, {
          hint: `set ${variable} in the environment of the process that runs the flow`,
        }),
      );
    }
    registerSecret(value);
    // A bare token in an Authorization header is sent as a bearer token.
    headers[header] = header.toLowerCase() === 'authorization' && !/\s/.test(value.trim()) ? `Bearer ${value.trim()}` : value;
  }
  return headers;
}

/**
 * Sends the task (or, for a call re-sent after a crash whose task the log holds, goes back to that
 * task), follows it to its end and turns the ending into the call's output or error.
 */
async function callAgent(client: Client, name: string, task: string, context: ToolContext, timeoutMs: number): Promise<string> {
  const deadline = startDeadline(context.signal, timeoutMs);
  const remote = new RemoteTask(context);
  try {
    if (remote.taskId !== '') {
      await reattach(client, name, remote, deadline.signal);
    } else {
      // Sent without waiting for the task (`returnImmediately`): the remote then keeps its task up
      // to date by itself, whereas a task sent with message/stream is kept up to date only while
      // its caller reads the stream, and a caller that dies would leave it standing still.
      const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
      const sent = await client.sendMessage({ tenant: '', message: messageOf(task, context.idempotencyKey), configuration, metadata: undefined }, { signal: deadline.signal });
      remote.take({ payload: 'messageId' in sent ? { $case: 'message', value: sent } : { $case: 'task', value: sent } });
      await follow(client, remote, deadline.signal);
    }
    if (remote.message !== undefined) return textOf(remote.message);
    return answerOf(name, remote.last);
  } catch (error) {
    if (!deadline.signal.aborted) {
      if (error instanceof RedflowError) throw error;
      throw new RedflowError({ code: ErrorCode.TOOL_FAILED, message: `A2A agent '${name}' failed: ${messageOfError(error)}`, hint: 'check that the remote agent is up and reachable', retryable: true });
    }
    const { taskId } = remote;
    if (taskId !== '') await cancelQuietly(client, taskId);
    if (deadline.timedOut()) {
      throw new RedflowError({ code: ErrorCode.TOOL_TIMEOUT, message: `A2A agent '${name}' did not finish its task within ${timeoutMs} ms (task ${taskId || 'not started'} cancelled)`, hint: 'raise timeoutMs on the agent.a2a node, or give it a smaller task' });
    }
    throw new RedflowError({ code: ErrorCode.RUN_ABORTED, message: `the run was aborted while A2A agent '${name}' worked (task ${taskId || 'not started'} cancelled)` });
  } finally {
    deadline.dispose();
  }
}

/** The call's output: the text of a completed task, or the coded failure the model sees. */
function answerOf(name: string, task: Task | undefined): string {
  const state = task?.status?.state;
  const said = textOf(task?.status?.message);
  if (state === TaskState.TASK_STATE_COMPLETED) {
    const artifacts = (task?.artifacts ?? []).map((artifact) => textOf(artifact)).filter((text) => text !== '');
    return artifacts.length > 0 ? artifacts.join('\n') : said;
  }
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) {
    throw taskFailed(`A2A agent '${name}' asks a question before it goes on (task ${task?.id}): ${said || '(no question given)'}`, 'answer it in a new task with the missing details, or ask the user');
  }
  throw taskFailed(`A2A agent '${name}' ended its task ${task?.id ?? ''} ${stateName(state)}${said ? `: ${said}` : ''}`, 'read the remote agent\'s reason; change the task or try another way');
}

function taskFailed(message: string, hint: string): RedflowError {
  return new RedflowError({ code: ErrorCode.A2A_TASK_FAILED, message, hint });
}

/** The one message of a call: its id is the idempotency key's digest, the same when the call is re-sent. */
function messageOf(task: string, idempotencyKey: string): Message {
  return {
    messageId: `redflow-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32)}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: task }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Best effort: the call fails anyway, and a remote that is gone must not hold it up. */
async function cancelQuietly(client: Client, taskId: string): Promise<void> {
  try {
    await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) });
  } catch {
    // The task may have ended meanwhile, or the remote be down: nothing more can be done from here.
  }
}

function messageOfError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function unavailable(name: string, url: string, error: unknown): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.A2A_AGENT_UNAVAILABLE, `A2A agent '${name}': cannot read its agent card at ${url}: ${messageOfError(error)}`, {
      hint: 'check the url of the agent.a2a node (the agent card, or the base URL serving /.well-known/agent-card.json) and that the remote agent is running',
    }),
  );
}
