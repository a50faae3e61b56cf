import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../../errors.js';
import { registerSecret } from '../../secrets/secrets.js';
import { parseNodeRedFlows, type NodeRedFlowNode } from '../../flows/nodeRed/nodeRedFlows.js';

/** The environment variable `redflow serve --node-red` takes Node-RED's token from. */
export const NODE_RED_TOKEN_ENV = 'REDFLOW_NODE_RED_TOKEN';

/** Options of {@link nodeRedAdmin}. */
export interface NodeRedAdminOptions {
  /** Node-RED's address, e.g. `http://127.0.0.1:1880` (with its `httpAdminRoot` path, when it has one). */
  readonly url: string;
  /** A token of Node-RED's adminAuth (`POST /auth/token`), sent as `Authorization: Bearer`. */
  readonly token?: string;
  /** Longest a request may take, in ms (default 30 s; a long poll adds its wait). */
  readonly timeoutMs?: number;
}

/** The deployed flows and their revision, as `GET /flows` (API v2) gives them. */
export interface DeployedFlows {
  readonly flows: NodeRedFlowNode[];
  readonly rev: string;
}

/** A client of a Node-RED's Admin API, as far as `redflow serve --node-red` needs it. */
export interface NodeRedAdmin {
  /** The address, without a trailing `/`. */
  readonly url: string;
  flows(): Promise<DeployedFlows>;
  /**
   * Deploys `flows` over revision `rev`, restarting only the tabs that changed. Resolves `false`
   * when the flows changed since `rev` (someone deployed meanwhile): read them again and merge.
   */
  deploy(flows: readonly NodeRedFlowNode[], rev: string): Promise<boolean>;
  /** A request to one of the Redflow nodes' admin routes (`/redflow/...`): its JSON, or its coded error thrown. */
  redflow<T>(method: 'GET' | 'POST', path: string, body?: unknown, options?: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<T>;
}

/**
 * A client of Node-RED's Admin API: its flows (`GET`/`POST /flows`, API v2 with revisions) and the
 * Redflow nodes' routes. Errors are coded: `NODE_RED_UNREACHABLE` (no answer, or one it should not
 * give), `NODE_RED_UNAUTHORIZED` (adminAuth refused the token), and the Redflow routes' own codes.
 *
 * @example
 * ```ts
 * const admin = nodeRedAdmin({ url: 'http://127.0.0.1:1880', token: process.env.NODE_RED_TOKEN });
 * const { flows, rev } = await admin.flows();
 * ```
 */
export function nodeRedAdmin(options: NodeRedAdminOptions): NodeRedAdmin {
  const url = options.url.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  registerSecret(options.token);

  const request = async (method: string, path: string, body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal, timeout = timeoutMs): Promise<Response> => {
    const headers: Record<string, string> = { accept: 'application/json', ...extra };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const signals = [AbortSignal.timeout(timeout), ...(signal === undefined ? [] : [signal])];
    let response: Response;
    try {
      response = await fetch(`${url}${path}`, { method, headers, signal: AbortSignal.any(signals), ...(body !== undefined && { body: JSON.stringify(body) }) });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      const why = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeout} ms` : describeCause(error);
      throw new RedflowError(errorInfo(ErrorCode.NODE_RED_UNREACHABLE, `Node-RED at ${url} cannot be reached (${method} ${path}): ${why}`, { hint: 'is Node-RED running at that address (its httpAdminRoot included)?', retryable: true }), { cause: error });
    }
    if (response.status === 401 || response.status === 403) {
      throw new RedflowError(
        errorInfo(ErrorCode.NODE_RED_UNAUTHORIZED, `Node-RED at ${url} refused ${method} ${path} (${response.status}): ${options.token === undefined ? 'its adminAuth is on and no token was given' : 'the token is wrong, expired, or lacks the permission'}`, {
          hint: 'give a token of a user who may read and deploy flows: --node-red-token <token> (POST /auth/token gives one)',
        }),
      );
    }
    return response;
  };

  const unexpected = async (response: Response, what: string): Promise<RedflowError> => {
    const text = (await response.text().catch(() => '')).slice(0, 300);
    return new RedflowError(errorInfo(ErrorCode.NODE_RED_UNREACHABLE, `Node-RED at ${url} answered ${what} with ${response.status}: ${text}`, { hint: 'see Node-RED\'s log' }));
  };

  return {
    url,

    async flows() {
      const response = await request('GET', '/flows', undefined, { 'node-red-api-version': 'v2' });
      if (!response.ok) throw await unexpected(response, 'GET /flows');
      const body = (await response.json()) as { flows?: unknown; rev?: unknown };
      if (typeof body.rev !== 'string') throw await unexpected(response, 'GET /flows (no rev: not Node-RED 1.0 or later?)');
      return { flows: parseNodeRedFlows(body.flows, `the flows of Node-RED at ${url}`), rev: body.rev };
    },

    async deploy(flows, rev) {
      const response = await request('POST', '/flows', { flows, rev }, { 'node-red-api-version': 'v2', 'node-red-deployment-type': 'flows' });
      if (response.status === 409) return false;
      if (!response.ok) throw await unexpected(response, 'the deploy (POST /flows)');
      return true;
    },

    async redflow<T>(method: 'GET' | 'POST', path: string, body?: unknown, extra: { signal?: AbortSignal; timeoutMs?: number } = {}) {
      const response = await request(method, `/redflow${path}`, body ?? (method === 'POST' ? {} : undefined), {}, extra.signal, extra.timeoutMs ?? timeoutMs);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (response.ok) return parsed as T;
      const error = (parsed as { error?: Partial<ErrorInfo> } | undefined)?.error;
      if (error !== undefined && typeof error.code === 'string' && Object.hasOwn(ErrorCode, error.code) && typeof error.message === 'string') {
        throw new RedflowError(errorInfo(error.code as ErrorCode, error.message, typeof error.hint === 'string' ? { hint: error.hint } : {}));
      }
      if (response.status === 404) {
        throw new RedflowError(
          errorInfo(ErrorCode.NODE_RED_AGENT_NOT_RUNNING, `Node-RED at ${url} has no route ${method} /redflow${path.split('?')[0] ?? ''}`, {
            hint: 'install node-red-contrib-redflow (and redflow) in Node-RED\'s user directory and restart it',
          }),
        );
      }
      throw new RedflowError(errorInfo(ErrorCode.NODE_RED_UNREACHABLE, `Node-RED at ${url} answered ${method} /redflow${path} with ${response.status}: ${text.slice(0, 300)}`));
    },
  };
}

function describeCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String((cause as { code: unknown }).code) : undefined;
  const message = cause instanceof Error ? cause.message : String(cause);
  return code !== undefined && !message.includes(code) ? `${code} ${message}` : message;
}
