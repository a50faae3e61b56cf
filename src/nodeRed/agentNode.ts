import { ErrorCode } from '../errors.js';
import { httpStatusOf } from '../errorKinds.js';
import { startAgentHost } from './agentHost.js';
import type { AgentHost } from './agentHostTypes.js';
import { checkAgentWiring, describeDiagnostic } from './agentWiring.js';
import type { AdminHandler, NodeRedApi, NodeRedNode, NodeRedNodeConfig } from './nodeRedApi.js';
import { NodeRedType } from '../flows/nodeRed/nodeRedTypes.js';
import { registerRunRoutes } from './runRoutes.js';
import { flushTelemetry } from '../telemetry/enableTelemetry.js';
import { telemetryFromEnvironment } from './nodeRedTelemetry.js';

/** The agents running in this Node-RED, by node id: what the editor's admin routes read. */
const hosts = new Map<string, AgentHost>();

/** Runs the Runtime / Debug tab lists. */
const RECENT_RUNS = 10;
/** How long closing an agent waits for its spans to reach the exporter: within Node-RED's 15 s close timeout. */
const FLUSH_ON_CLOSE_MS = 3000;

/**
 * Registers the agent core (`redflow-agent`) and the editor's admin routes:
 * `GET /redflow/agents/:id` (the deployed agent's wiring problems and its recent runs, for the
 * Runtime / Debug and Errors tabs) and `POST /redflow/validate` (`{ agent, nodes }`: the wiring
 * as the editor has it now, checked before it is deployed), and the routes Redflow's editor runs
 * agents through (see `runRoutes.ts`). Turns telemetry on when the environment asks for it
 * (`REDFLOW_OTEL=1`, see `telemetryFromEnvironment`): the promise returned settles once it is on
 * (or known to be off), so that Node-RED, awaiting the node module, starts no flow before.
 *
 * @example
 * ```ts
 * module.exports = async (RED) => (await import('redflow/node-red')).registerAgentNode(RED);
 * ```
 */
export function registerAgentNode(RED: NodeRedApi): Promise<void> {
  const telemetry = telemetryFromEnvironment(RED);
  registerAgentType(RED);
  return telemetry;
}

/** Registers the agent's node type and its admin routes. */
function registerAgentType(RED: NodeRedApi): void {
  RED.nodes.registerType(NodeRedType.Agent, function (this: NodeRedNode, config: NodeRedNodeConfig) {
    RED.nodes.createNode(this, config);
    const host = startAgentHost(RED, this);
    hosts.set(this.id, host);
    this.on('input', (msg, send, done) => host.input(msg, send, done));
    this.on('close', (removed, done) => {
      void host
        .close(removed)
        .then(() => {
          if (hosts.get(this.id) === host) hosts.delete(this.id);
        })
        // Node-RED closes its nodes before it exits (a stop, a redeploy): what the telemetry SDK
        // still holds of this agent's spans goes to its exporter first, or it would be lost.
        .then(() => flushTelemetry(FLUSH_ON_CLOSE_MS))
        .then(
          () => done(),
          () => done(),
        );
    });
  });

  registerRunRoutes(RED, hosts);
  const admin = RED.httpAdmin;
  if (admin === undefined) return;
  const canRead: AdminHandler = RED.auth?.needsPermission('flows.read') ?? ((_req, _res, next) => next?.());
  admin.get('/redflow/agents/:id', canRead, (req, res) => {
    const host = hosts.get(req.params.id ?? '');
    if (host === undefined) {
      refuse(res, ErrorCode.HTTP_NOT_FOUND, 'no agent with this id is deployed');
      return;
    }
    const description = host.describe();
    host.recentRuns(RECENT_RUNS).then(
      (runs) => res.json({ ...description, runs }),
      (error: unknown) => refuse(res, ErrorCode.HTTP_INTERNAL_ERROR, String(error)),
    );
  });
  admin.post('/redflow/validate', canRead, (req, res) => {
    const body = req.body as { agent?: unknown; nodes?: unknown } | undefined;
    if (typeof body?.agent !== 'string' || !Array.isArray(body.nodes)) {
      refuse(res, ErrorCode.HTTP_BODY_INVALID, 'send { "agent": "<node id>", "nodes": [<node configurations>] }');
      return;
    }
    const configs = new Map<string, NodeRedNodeConfig>();
    for (const config of body.nodes as NodeRedNodeConfig[]) {
      if (typeof config === 'object' && config !== null && typeof config.id === 'string') configs.set(config.id, config);
    }
    if (!configs.has(body.agent)) {
      refuse(res, ErrorCode.HTTP_BODY_INVALID, 'the agent is not among the nodes');
      return;
    }
    const { graph, validation } = checkAgentWiring(body.agent, configs);
    const describe = (list: readonly { code: string; message: string; hint?: string; nodeId?: string }[]) =>
      list.map((diagnostic) => ({ ...diagnostic, message: describeDiagnostic(diagnostic as Parameters<typeof describeDiagnostic>[0], graph.labels) }));
    res.json({ ok: validation.ok, errors: validation.ok ? [] : describe(validation.errors), warnings: describe(validation.warnings), flow: graph.flow });
  });
}

/** Answers `{ error }` with the status of its code (the API's table: `httpStatusOf`). */
function refuse(res: { status(code: number): { json(body: unknown): unknown } }, code: ErrorCode, message: string): void {
  res.status(httpStatusOf(code)).json({ error: { code, message } });
}
