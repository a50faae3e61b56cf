import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { logStatus } from '../events/resumePoint.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import { RunHost } from '../host/runHost.js';
import type { LaunchedRun, LiveRun } from '../host/liveRuns.js';
import { isRunWaiting, type RunWaitingError } from '../runtime/runWaitingError.js';
import { randomIds } from '../runtime/ids.js';
import { resumeRun, startRun } from '../runtime/runAgent.js';
import type { RunHandle, RunResult } from '../runtime/runSession.js';
import type { AgentActors } from './agentActors.js';
import { currentWiring, releaseGeneration, startGeneration, withHint, type Generation } from './agentGeneration.js';
import { showInDebugSidebar } from './debugSidebar.js';
import type { DoneFunction, NodeRedApi, NodeRedMessage, NodeRedNode, SendFunction } from './nodeRedApi.js';
import { admitRequest, runMemory } from './runRequest.js';
import { endedStatus, problemStatus, runningStatus } from './runStatus.js';
import { followToolProgress, type ToolProgressFollower } from './toolProgress.js';
import { jsonlRunLogs } from './jsonlRunLogs.js';
import type { AgentHost, AgentRunRequest, RedflowNodeRedSettings } from './agentHostTypes.js';
import type { RunLog, RunLogs, UnfinishedRun } from './runLogs.js';

/**
 * How long a redeploy or a stop waits for a tool call under way to finish before the run is
 * stopped: a call cut short is sent again (same idempotency key) when the agent starts again.
 * Node-RED itself gives a closing node 15 s.
 */
export const CLOSE_GRACE_MS = 5_000;

/**
 * Starts the runtime of an agent node: checks its wiring as a Redflow flow (a red status with the
 * code and reason when it is wrong), builds and serves its actors, and continues the runs its
 * previous life left unfinished (a restart, a redeploy, `kill -9`), each from its log, once.
 *
 * @example
 * ```ts
 * RED.nodes.registerType('redflow-agent', function (config) {
 *   RED.nodes.createNode(this, config);
 *   const host = startAgentHost(RED, this);
 *   this.on('input', (msg, send, done) => host.input(msg, send, done));
 *   this.on('close', (removed, done) => void host.close(removed).then(done, done));
 * });
 * ```
 */
export function startAgentHost(RED: NodeRedApi, node: NodeRedNode): AgentHost {
  const settings = (RED.settings.redflow ?? {}) as RedflowNodeRedSettings;
  const baseDir = RED.settings.userDir ?? process.cwd();
  const runsDir = path.join(settings.runsDir ?? path.join(baseDir, 'redflow', 'runs'), node.id);
  const fsync = settings.fsync ?? 'always';
  const closeGraceMs = settings.closeGraceMs ?? CLOSE_GRACE_MS;
  const nats = settings.nats;
  const logs: Promise<RunLogs> =
    nats === undefined ? Promise.resolve(jsonlRunLogs(runsDir, fsync)) : import('./jetStreamRunLogs.js').then((module) => module.openJetStreamRunLogs(nats, node.id));
  let where = nats === undefined ? runsDir : 'JetStream';
  logs.then(
    (opened) => (where = opened.where),
    () => undefined,
  );
  logs.catch((error: unknown) => {
    const info = toErrorInfo(error, ErrorCode.LOG_STORE_UNAVAILABLE);
    node.status(problemStatus(`${info.code}: ${info.message}`));
    node.error(withHint({ code: info.code, message: `the runs' log cannot be opened: ${info.message}`, ...(info.hint !== undefined && { hint: info.hint }) }));
  });
  /**
   * While the runs a previous life left unfinished are looked for: the runs this agent started or
   * answered meanwhile. The look lists the log's runs as it goes (a long stream takes a while), so
   * it can come upon one of them, under way or parked here: it is not the look's to continue.
   */
  let takenWhileResuming: Set<string> | undefined = new Set();
  let closing = false;

  const place = { baseDir, ...(settings.allowFiles !== undefined && { allowFiles: settings.allowFiles }) };
  let generation = startGeneration(RED, node, place, currentWiring(RED, node.id));
  const retired = new Set<Generation>();
  const first = generation;
  first.actors.then(
    (ready) => void resumeUnfinished(ready, first),
    () => (takenWhileResuming = undefined),
  );

  /**
   * After a deploy that restarted only some nodes (Node-RED's "modified nodes"), the agent may be
   * left running with a capability changed: its new runs then get a new generation.
   */
  const onFlowsStarted = (): void => {
    if (closing) return;
    const now = currentWiring(RED, node.id);
    if (now.fingerprint === generation.fingerprint) return;
    const previous = generation;
    previous.retired = true;
    retired.add(previous);
    void releaseGeneration(previous);
    generation = startGeneration(RED, node, place, now);
  };
  RED.events?.on('flows:started', onFlowsStarted);

  /** Shows a run's tool progress as the agent's status until it ends or parks (src/nodeRed/toolProgress.ts). */
  const followProgress = (ready: AgentActors, traceId: string): ToolProgressFollower =>
    followToolProgress(ready.transport, ready.subjects.live?.(traceId), (status) => closing || node.status(status), () => host.running().length);

  /**
   * Shows each event of the run (its status, the debug sidebar) and, while it lasts, its tool
   * calls' progress as they report it; the host keeps each event first.
   */
  function eventHandler(debug: boolean, record: (event: AgentEvent) => void, progress: ToolProgressFollower): (event: AgentEvent) => void {
    return (event) => {
      record(event);
      progress.seen(event);
      if (event.type !== 'run.completed' && event.type !== 'run.failed' && !closing) node.status(runningStatus(event, host.running().length));
      if (debug) showInDebugSidebar(RED, node, event);
    };
  }

  /**
   * Hands the host a run under way with the configuration `used`: what it settles into sends the
   * run's answer once it has ended, and closes its log (a run that parks rejects, so the host
   * keeps its deadline once its log is closed).
   */
  function launched(handle: RunHandle, used: Generation, log: RunLog, msg: NodeRedMessage, send: SendFunction, done: DoneFunction, resumed: boolean): LaunchedRun {
    used.users += 1;
    let waiting: RunWaitingError | undefined;
    const finished = handle.result
      .then(
        (result: RunResult) => {
          if (closing) return done();
          const { outcome, envelope, traceId } = result;
          node.status(endedStatus(outcome, envelope.state.iteration));
          msg.payload = outcome.answer ?? '';
          msg.redflow = {
            traceId,
            outcome,
            envelope,
            ...(log.logPath !== undefined && { logPath: log.logPath }),
            ...(log.stream !== undefined && { stream: log.stream }),
            ...(resumed && { resumed: true }),
          };
          send(msg);
          if (outcome.status === 'blocked') done(new Error(`${outcome.error?.code ?? outcome.reason}: ${outcome.error?.message ?? 'the run ended blocked'}`));
          else done();
        },
        (error: unknown) => {
          // A run stopped for a redeploy or a restart goes on when the agent starts again.
          if (error instanceof RedflowError && error.code === ErrorCode.RUN_STOPPED) return done();
          // Parked in its log until its answer comes (POST /redflow/runs/:traceId/answer), or its deadline.
          if (isRunWaiting(error)) {
            waiting = error;
            return done();
          }
          const info = toErrorInfo(error, ErrorCode.LOG_STORE_UNAVAILABLE);
          if (!closing) node.status(problemStatus(`${info.code}: ${info.message}`));
          done(new Error(`${info.code}: ${info.message}`));
        },
      )
      .finally(async () => {
        await log.close().catch(() => undefined);
        if (waiting !== undefined && !closing) node.status({ fill: 'yellow', shape: 'ring', text: `waiting: ${waiting.wait.kind} · #${waiting.wait.iteration}` });
        used.users -= 1;
        if (!closing) await releaseGeneration(used);
        // Parked, its log closed: the host takes an answer from now on.
        if (waiting !== undefined) throw waiting;
      });
    return { handle, finished };
  }

  /** Starts a run of the request; resolves with the run under way here and its result. */
  async function startOne(msg: NodeRedMessage, send: SendFunction, done: DoneFunction, request: AgentRunRequest): Promise<{ run: LiveRun; result: Promise<RunResult> }> {
    const used = generation;
    const ready = await used.actors;
    if (closing) throw new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the agent is stopping'));
    const { input, memory } = admitRequest(ready, request);
    const traceId = randomIds.traceId();
    takenWhileResuming?.add(traceId);
    const log = await (await logs).create(traceId);
    let result!: Promise<RunResult>;
    try {
      const run = await host.launch(traceId, ({ record }) => {
        const progress = followProgress(ready, traceId);
        const handle = startRun({
          agent: ready.agent,
          tools: ready.tools,
          transport: ready.transport, modelName: ready.modelName,
          subjects: ready.subjects,
          store: log.store,
          input,
          traceId,
          flow: { id: node.id },
          ...(memory !== undefined && { memory }),
          ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
          onEvent: eventHandler(ready.agent.debug === true, record, progress),
        });
        void handle.result.then(progress.stop, progress.stop);
        result = handle.result;
        return launched(handle, used, log, msg, send, done, false);
      });
      return { run, result };
    } catch (error) {
      await log.close();
      throw error;
    }
  }

  async function resumeUnfinished(ready: AgentActors, used: Generation): Promise<void> {
    const report = (where: string, error: unknown): void => {
      const info = toErrorInfo(error, ErrorCode.LOG_RECORD_CORRUPT);
      node.error(withHint({ code: info.code, message: `cannot resume ${where}: ${info.message}`, ...(info.hint !== undefined && { hint: info.hint }) }));
    };
    try {
      for await (const run of (await logs).unfinished(report)) {
        if (closing) {
          await run.log.close();
          return;
        }
        if (takenWhileResuming?.has(run.traceId) === true) {
          await run.log.close();
          continue;
        }
        try {
          await resumeOne(ready, used, run);
        } catch (error) {
          await run.log.close();
          report(run.log.logPath ?? run.traceId, error);
        }
      }
    } catch (error) {
      report('the unfinished runs', error);
    } finally {
      takenWhileResuming = undefined;
    }
  }

  /** Resumes a run from its log here (with the answer to its wait, when it has one); its log is closed only once it is launched. */
  async function resumeOne(ready: AgentActors, used: Generation, run: UnfinishedRun, answer?: WaitAnswer): Promise<void> {
    const status = logStatus(run.events);
    if (status.kind === 'finished') return;
    const memory = runMemory(ready, status.started.conversationId);
    await host.launch(
      run.traceId,
      ({ record }) => {
        const progress = followProgress(ready, run.traceId);
        const handle = resumeRun({
          // The log decides what the agent is: its config and tools as recorded when the run started.
          agent: status.started.agent,
          tools: status.started.tools,
          transport: ready.transport, modelName: ready.modelName,
          subjects: ready.subjects,
          store: run.log.store,
          events: run.events,
          ...(answer !== undefined && { answer }),
          ...(memory !== undefined && { memory }),
          onEvent: eventHandler(status.started.agent.debug === true, record, progress),
        });
        void handle.result.then(progress.stop, progress.stop);
        return launched(handle, used, run.log, newMessage(), sendOut, reportError, true);
      },
      run.events,
    );
  }

  /** A message for a run that no message started: its answer leaves as a new one. */
  const newMessage = (): NodeRedMessage => ({ _msgid: RED.util.generateId() });
  const sendOut: SendFunction = (out) => node.send(out);
  const reportError: DoneFunction = (error) => (error === undefined ? undefined : node.error(error));

  /** Owns the agent's runs: those under way, the answers to parked ones and their deadlines. */
  const host = new RunHost({
    read: async (traceId) => {
      takenWhileResuming?.add(traceId);
      return (await logs).read(traceId);
    },
    resume: async ({ traceId, events, answer }) => {
      const used = generation;
      const ready = await used.actors;
      const log = await (await logs).reopen(traceId);
      try {
        await resumeOne(ready, used, { traceId, events, log }, answer);
      } catch (error) {
        await log.close();
        throw error;
      }
    },
    closedError: () => new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the agent is stopping')),
    onExpireError: (_traceId, error) => node.error(withHint(toErrorInfo(error, ErrorCode.LOG_STORE_UNAVAILABLE))),
  });

  /** Waits, within the grace period, for a tool call under way to end, so a redeploy does not make it twice. */
  function callSettled(run: LiveRun): Promise<void> {
    const last = run.events.at(-1);
    if (last?.type !== 'tool.requested') return Promise.resolve();
    return run.changed(last.seq, closeGraceMs);
  }

  return {
    input(msg, send, done) {
      const request = { input: msg.payload, ...(msg.conversationId !== undefined && { conversationId: msg.conversationId as string }) };
      startOne(msg, send, done, request).catch((error: unknown) => {
        const info = toErrorInfo(error, ErrorCode.RUN_INPUT_INVALID);
        done(new Error(`${info.code}: ${info.message}`));
      });
    },

    async start(request) {
      const { run, result } = await startOne(newMessage(), sendOut, reportError, request);
      // Resolved once the first event is in the log, or the run has ended without one.
      await run.changed(0, Number.POSITIVE_INFINITY);
      if (run.events.length === 0) {
        const error = await result.then(() => undefined, (thrown: unknown) => thrown);
        const info = toErrorInfo(error, ErrorCode.LOG_STORE_UNAVAILABLE);
        throw new RedflowError(errorInfo(info.code, `the run ended before recording its start: ${info.message}`, info.hint === undefined ? {} : { hint: info.hint }));
      }
      return { traceId: run.traceId };
    },

    async events(traceId, afterSeq) {
      const run = host.live(traceId);
      const events = run !== undefined ? run.events : await (await logs).read(traceId);
      if (events === undefined) return undefined;
      return { events: events.filter((event) => event.seq > afterSeq), running: run !== undefined };
    },

    waitForEvents(traceId, afterSeq, waitMs) {
      return host.live(traceId)?.changed(afterSeq, waitMs) ?? Promise.resolve();
    },

    abort: (traceId, reason) => host.abort(traceId, reason),

    answer: (traceId, answer) => host.answer(traceId, answer),

    async close(removed) {
      closing = true;
      RED.events?.removeListener('flows:started', onFlowsStarted);
      host.close();
      if (removed) await host.endRuns({ abort: 'the agent node was removed' });
      else {
        await Promise.all(host.running().map((traceId) => host.live(traceId)).map((run) => run && callSettled(run)));
        await host.endRuns('stop');
      }
      for (const used of [generation, ...retired]) {
        used.retired = true;
        used.users = 0;
        await releaseGeneration(used);
      }
      await (await logs.catch(() => undefined))?.close();
    },

    describe() {
      return { id: node.id, ...(node.z !== undefined && { tab: node.z }), logs: where, errors: generation.errors, warnings: generation.warnings, running: host.running() };
    },

    async recentRuns(limit) {
      return (await logs).recent(new Set(host.running()), limit);
    },
  };
}
