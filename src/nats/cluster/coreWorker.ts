import { hostname } from 'node:os';
import { parkedAs, startCoreService } from './coreService.js';
import type { AgentCoreReactConfig, ToolSpec } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { Subject, DEFAULT_SUBJECT_PREFIX, Storage, checkSubjectPrefix } from '../../actors/subjects.js';
import { createNatsTransport } from '../natsTransport.js';
import type { Subscription, Transport } from '../../actors/transport.js';
import { openJetStreamEventStore } from '../jetstream/jetstreamEventStore.js';
import { storeUnavailable } from '../jetstream/storeUnavailable.js';
import type { EventStore } from '../../events/eventStore.js';
import { logStatus } from '../../events/resumePoint.js';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import type { WaitAnswer } from '../../events/pendingWait.js';
import type { LaunchedRun } from '../../host/liveRuns.js';
import { answerStillDue } from '../../host/takeAnswer.js';
import { forkChangesOf, withForkReplies } from '../../host/forkChanges.js';
import { isRunWaiting } from '../../runtime/runWaitingError.js';
import { loadValidFlow } from '../../flows/loadValidFlow.js';
import { planRun } from '../../runtime/runPlan.js';
import { contextBudgetFor } from '../../runtime/contextBudgetFor.js';
import { allowedTools } from '../../runtime/buildTools.js';
import { askMcpToolSpecs } from './mcpToolLists.js';
import { admitRun } from '../../host/admission.js';
import { checkSubjectTokens, runSubjects } from './flowSubjects.js';
import { isValidTraceId, randomIds } from '../../runtime/ids.js';
import { resumeRun, startRun } from '../../runtime/runAgent.js';
import type { RunHandle } from '../../runtime/runSession.js';
import { openRunLeases, type RunLeases, type RunRecord } from './runLeases.js';
import { serveRunAborts } from './runAborts.js';
import { serveRunAnswers, type RunAnswerReply } from './runAnswers.js';
import { runLogExists } from './runLogExists.js';
import { openPatiently } from './openPatiently.js';
import { createCoreRunHost } from './coreRunHost.js';
import { checkStartRequest, traceIdTaken, withCallContext, type RunStartReply, type RunStartRequest } from './runStart.js';
import type { CoreWorker, CoreWorkerOptions } from './coreWorkerTypes.js';

export type { RunStartReply, RunStartRequest } from './runStart.js';
export type { CoreWorker, CoreWorkerOptions } from './coreWorkerTypes.js';

/** How many orphaned runs one scan takes over at the same time. */
const TAKEOVERS_AT_ONCE = 16;

/**
 * The codes a run stops with because of its store, not of the run: an append refused or not taken
 * within its timeout (`LOG_STORE_UNAVAILABLE`), or the store judging this worker another writer
 * (`LOG_CONCURRENT_WRITER`, which a retried write can be mistaken for). The run is resumed here
 * while its record names this worker.
 */
const KEPT_AFTER: ReadonlySet<string> = new Set([ErrorCode.LOG_STORE_UNAVAILABLE, ErrorCode.LOG_CONCURRENT_WRITER]);

/**
 * A core worker: runs the REACT statechart for the runs it is asked to start (requests on
 * `<prefix>.runs.start`, shared by every core worker in one queue group), with the model and tool
 * actors reached over NATS and the log in JetStream. It holds a lease on each run it owns and
 * renews it; when a worker dies, its leases expire and another worker takes its runs over and
 * resumes them from their logs. It also listens on every run's abort subject
 * (`<prefix>.runs.abort.<traceId>`) and aborts the runs it owns when asked (see `runAborts.ts`).
 *
 * @example
 * ```ts
 * const worker = await startCoreWorker({ nc, flowPath: 'flow.json' });
 * ```
 */
export async function startCoreWorker(options: CoreWorkerOptions): Promise<CoreWorker> {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  checkSubjectPrefix(prefix);
  const owner = options.owner ?? `${hostname()}-${process.pid}`;
  const askedLeaseMs = options.leaseMs ?? 3000;
  const log = options.log ?? (() => undefined);
  const allowFiles = options.allowFiles ?? [];
  const { flow, baseDir, flowPath } = await loadValidFlow(options.flowPath, undefined, allowFiles);
  checkSubjectTokens(flow);
  // The core hosts no model and no memory store: it needs only the agent, the trigger's input
  // check, and the specs of the tools it validates answers against (see allowedToolSpecs for why
  // tool.module specs come from importing the module here). The actors run in other workers.
  const plan = planRun(flow, baseDir);
  // A tool.mcp's tools are listed by the tool workers, which run its server (see mcpToolLists.ts).
  const { agent, tools }: { agent: AgentCoreReactConfig; tools: ToolSpec[] } = await allowedTools(plan, { allowFiles, mcpToolSpecs: askMcpToolSpecs(options.nc, prefix) });
  // The model's window (contextTokens): requests are fitted here, where the statechart builds them.
  const contextBudget = await contextBudgetFor(plan.model.config);
  const { replication } = options;
  // A cluster still electing or catching up answers with timeouts for a while: wait, saying so.
  const patiently = { log, ...(options.startWithinMs !== undefined && { withinMs: options.startWithinMs }) };
  const store: EventStore = await openPatiently(options.nc, `the trace stream of ${prefix}`, () => openJetStreamEventStore(options.nc, { prefix, ...replication }), patiently);
  const leases: RunLeases = await openPatiently(options.nc, `the run buckets of ${prefix}`, () => openRunLeases(options.nc, { prefix, owner, leaseMs: askedLeaseMs, ...(replication && { replication }) }), patiently);
  const micro = options.microServices === false ? undefined : await startCoreService(options.nc, prefix, flow.definition.id ?? flowPath, log);
  const transport: Transport = createNatsTransport(options.nc, micro === undefined ? {} : { listener: micro });
  // The prefix's lease is the one its first core worker set; ours only if we were first.
  const leaseMs = leases.leaseMs;
  if (leaseMs !== askedLeaseMs) {
    log(`the lease of prefix "${prefix}" is ${leaseMs} ms, set by its first core worker; ${askedLeaseMs} ms is not used (delete the bucket ${Storage.leasesBucket(prefix)} to change it)`);
  }
  const { subjects, memoryOf } = runSubjects(prefix, flow, plan);
  const environment = {
    transport,
    subjects,
    store,
    attemptTimeoutMs: options.attemptTimeoutMs ?? 30_000,
    ...(contextBudget !== undefined && { contextBudget }), modelName: plan.model.config.model ?? '',
    ...(options.onEvent !== undefined && { onEvent: options.onEvent }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
  };
  let closing = false;

  /**
   * What a run's end leaves in its record: none when it ended, its wait when it parked (`subagent`:
   * the run is another run's subagent, which never parks: its wait ends at once, as if expired).
   */
  const launched = (traceId: string, handle: RunHandle, subagent: boolean): LaunchedRun => ({
    handle,
    finished: handle.result.then(
      async (result) => {
        await leases.finish(traceId);
        log(`run ${traceId} ended ${result.outcome.status} (${result.outcome.reason})`);
      },
      async (error: unknown) => {
        if (isRunWaiting(error)) {
          // Parked in its log: no worker holds it until an answer (or its deadline) comes. A
          // subagent's run is parked already expired, so that if this worker dies before ending
          // the wait below, any core worker's sweep ends it, not the wait's own deadline.
          await leases.park(traceId, subagent ? { ...parkedAs(error.wait), deadline: new Date().toISOString() } : parkedAs(error.wait));
          if (subagent) {
            // Its caller waits for its outcome, not for a person: the wait ends now (a question, escalate), once the host has let it go.
            log(`run ${traceId} is a subagent's: its wait ends now`);
            queueMicrotask(() => void takeAnswer(traceId, { kind: 'expire' }).catch((failure: unknown) => log(`run ${traceId}: cannot end its wait: ${(failure as Error).message}`)));
            return;
          }
          log(`run ${traceId} waits for ${error.wait.kind === 'approval' ? 'an approval' : 'its client'} of ${error.wait.tool} until ${error.wait.deadline}`);
          return;
        }
        // Stopped, or another worker owns the run now: leave it to them. A run stopped because the
        // store refused or did not take its write in time, or took this worker for another writer,
        // is still this worker's if its record says so: no other worker would ever take it over.
        log(`run ${traceId} left: ${error instanceof RedflowError ? `${error.code} (${error.message})` : String(error)}`);
        if (error instanceof RedflowError && KEPT_AFTER.has(error.code)) await keepIfStillMine(traceId);
      },
    ),
  });

  /**
   * A run stopped by its store (see KEPT_AFTER) whose record still names this worker: no other
   * worker would ever take it over, so the next scan resumes it here from its log (and again at
   * each scan while the store cannot take it).
   */
  const keepIfStillMine = async (traceId: string): Promise<void> => {
    let record: RunRecord | undefined;
    let why = 'closing';
    // Asked again while the bucket does not answer (an election): a wrong guess orphans the run.
    for (let attempt = 0; attempt < 20 && !closing; attempt++) {
      try {
        record = await leases.mine(traceId);
        why = 'it names another worker, or was written since it was read';
        break;
      } catch (error) {
        why = `the run bucket did not answer 20 times: ${(error as Error).message}`;
        await new Promise((resolve) => setTimeout(resolve, leaseMs));
      }
    }
    if (closing) return;
    if (record === undefined) return log(`run ${traceId}: left to its record's owner (${why})`);
    log(`run ${traceId}: its record still names this worker, resuming it from its log`);
    unresumed.set(traceId, record);
  };

  /** Resumes a run this worker owns now from its log, with the answer to its wait when it has one. */
  const resumeOwned = (traceId: string, events: readonly AgentEvent[], record: Pick<RunRecord, 'timeoutMs'>, answer?: WaitAnswer) => {
    const { started } = logStatus(events);
    const memory = memoryOf(started.conversationId);
    return host.launch(
      traceId,
      ({ record: keep }) => {
        const handle = resumeRun({
          ...environment,
          // A fork's scripted answers and tool results (its run.forked) answer before the actors do.
          transport: withForkReplies(environment.transport, subjects, forkChangesOf(events)),
          agent: started.agent,
          tools: started.tools,
          events,
          ...(memory && { memory }),
          // The timeout the client asked for starts again from the takeover.
          ...(record.timeoutMs !== undefined && { timeoutMs: record.timeoutMs }),
          ...(answer !== undefined && { answer }),
          onEvent: (event) => {
            keep(event);
            environment.onEvent?.(event);
          },
        });
        return launched(traceId, handle, started.parent !== undefined);
      },
      events,
    );
  };

  const host = createCoreRunHost({
    store,
    leases,
    log,
    resume: ({ traceId, events, answer, timeoutMs }) => resumeOwned(traceId, events, timeoutMs === undefined ? {} : { timeoutMs }, answer),
  });
  const takeAnswer = async (traceId: string, answer: WaitAnswer): Promise<RunAnswerReply> => {
    await host.answer(traceId, answer);
    return { accepted: true, owner };
  };

  const service: Subscription = transport.serve<RunStartRequest, RunStartReply>(
    Subject.runStart(prefix),
    async (request, context) => {
      if (closing) throw new RedflowError(errorInfo(ErrorCode.TRANSPORT_CLOSED, 'this core worker is shutting down', { retryable: true }));
      checkStartRequest(request);
      // Admitted before the run has a record: a run that could never run leaves nothing behind.
      admitRun({
        input: request.input,
        agent,
        tools,
        ...(contextBudget !== undefined && { contextBudget }),
        checkInput: (input) => {
          if (request.flowId !== undefined && flow.definition.id !== undefined && request.flowId !== flow.definition.id) {
            throw new RedflowError(
              errorInfo(ErrorCode.FLOW_MISMATCH, `the core workers run flow "${flow.definition.id}", not "${request.flowId}"`, {
                hint: 'start workers for that flow, or use another subject prefix per flow (--prefix)',
              }),
            );
          }
          const verdict = plan.checkInput?.(input) ?? true;
          if (verdict !== true) throw new RedflowError(errorInfo(ErrorCode.RUN_INPUT_INVALID, `the input does not match the trigger's inputSchema: ${verdict}`));
        },
      });
      const traceId = request.traceId ?? randomIds.traceId();
      if (!isValidTraceId(traceId)) {
        throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `"${traceId}" is not a valid trace id`));
      }
      // A taken trace id could never run (its first event would clash with the log's): refused
      // before the run has a record. The log is checked first: a finished run has no record left.
      // During a leader election of the trace stream the server answers no read: a coded, retryable
      // refusal, not the transport's fallback (TRANSPORT_BAD_MESSAGE), so the client tries again.
      const logged = await runLogExists(options.nc, prefix, traceId).catch((error: unknown) => {
        throw storeUnavailable(`cannot check whether trace id ${traceId} is taken`, error);
      });
      if (logged) throw traceIdTaken(traceId, 'its log is in the trace stream');
      const registered = await leases.register({
        traceId,
        startedAt: new Date().toISOString(),
        ...(request.conversationId !== undefined && { conversationId: request.conversationId }),
        ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
      });
      if (!registered) throw traceIdTaken(traceId, 'it is under way');
      const memory = memoryOf(request.conversationId);
      const run = await host.launch(traceId, ({ record }) =>
        launched(
          traceId,
          startRun({
            ...environment,
            agent,
            tools,
            input: request.input,
            traceId,
            flow: { ...(flow.definition.id !== undefined && { id: flow.definition.id }), path: flowPath },
            ...(memory && { memory }),
            ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
            ...(request.parent !== undefined && { parent: withCallContext(request.parent, context.headers) }),
            onEvent: (event) => {
              record(event);
              environment.onEvent?.(event);
            },
          }),
          request.parent !== undefined,
        ),
      );
      // Answered once the run's first event is stored, not before: a worker that dies in between
      // leaves a record and no log (the next worker drops the record), and its client, never told
      // the run started, finds no log and says so; told it started, the client finds the log.
      await run.changed(0, Number.POSITIVE_INFINITY);
      if (run.events[0]?.type !== AgentEventType.RunStarted) {
        throw new RedflowError(errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `run ${traceId} ended before its first event was stored`, { retryable: true }));
      }
      log(`run ${traceId} started`);
      return { traceId, owner };
    },
    { queue: 'core' },
  );

  // Aborts: every core worker hears every run's abort; only the owner of the run answers.
  const aborts = serveRunAborts(options.nc, prefix, owner, (traceId) => host.live(traceId)?.handle, log);
  // Answers to parked runs: one core worker of the queue group takes each, and resumes the run.
  const answers = serveRunAnswers(transport, prefix, takeAnswer);
  await options.nc.flush();

  // A worker that stalled past its lease may find its runs taken over: it lets them go.
  // The watch of the records is only a hint: it lags under a leader election, and a run that
  // ends loses its record before the host lets it go. Stopping a run no other worker owns would
  // leave it unfinished, so the bucket, read now, decides.
  let checking = false;
  const checkOwnership = setInterval(() => {
    if (checking) return;
    checking = true;
    void Promise.all(
      host.running().map(async (traceId) => {
        if (leases.owns(traceId) || (await leases.stillOwns(traceId))) return;
        log(`run ${traceId}: owned by another worker now, stopping`);
        host.live(traceId)?.handle?.stop();
      }),
    ).finally(() => (checking = false));
  }, Math.max(100, Math.floor(leaseMs / 3)));
  checkOwnership.unref();

  let scanning = false;
  const scan = setInterval(() => {
    if (scanning || closing) return;
    scanning = true;
    void takeOver()
      .then(expireWaits)
      .finally(() => (scanning = false));
  }, options.scanMs ?? Math.max(100, Math.floor(leaseMs / 3)));
  scan.unref();

  // Runs this worker claimed and could not resume (their log unreadable during an election, or the
  // claim's answer lost): their records name this live worker, so no other worker ever takes them;
  // each scan tries them again until they run here or the record names another worker.
  const unresumed = new Map<string, RunRecord>();

  async function takeOver(): Promise<void> {
    let orphans: RunRecord[];
    try {
      orphans = await leases.orphans();
    } catch (error) {
      log(`scan failed: ${(error as Error).message}`);
      orphans = [];
    }
    // A dead worker leaves all its runs at once: they are taken over several at a time, each a
    // claim and a read of its log, so the last one is not kept waiting behind all the others.
    const queue = [...unresumed.values(), ...orphans.filter((record) => !unresumed.has(record.traceId))];
    const takeNext = async (): Promise<void> => {
      for (let record = queue.shift(); record !== undefined; record = queue.shift()) await takeOverOne(record);
    };
    await Promise.all(Array.from({ length: Math.min(TAKEOVERS_AT_ONCE, queue.length) }, takeNext));
  }

  async function takeOverOne(record: RunRecord): Promise<void> {
    if (host.live(record.traceId) !== undefined || closing) return void unresumed.delete(record.traceId);
    try {
      if (!(await leases.claim(record))) return void unresumed.delete(record.traceId);
      unresumed.set(record.traceId, record);
      let read;
      try {
        read = await store.read(record.traceId);
      } catch (error) {
        if (!(error instanceof RedflowError && error.code === ErrorCode.LOG_NOT_FOUND)) throw error;
        // Its worker died between the record and the first event: there is nothing to resume.
        await leases.finish(record.traceId);
        unresumed.delete(record.traceId);
        log(`run ${record.traceId} never started (no event in its log): its record is dropped`);
        return;
      }
      const { events, problems } = read;
      if (problems.length > 0) log(`run ${record.traceId}: ${problems[0]?.code} in its log; resuming from the good part`);
      const status = logStatus(events);
      if (status.kind === 'finished') {
        await leases.finish(record.traceId);
        unresumed.delete(record.traceId);
        return;
      }
      // A worker that died after taking an answer left it in the record: the run takes it, unless
      // the log has it already (or the answer no longer fits; then the run parks again).
      const answer = answerStillDue(events, record.answer);
      await resumeOwned(record.traceId, events, record, answer);
      unresumed.delete(record.traceId);
      log(`run ${record.traceId} taken over after event ${events.length}`);
    } catch (error) {
      unresumed.set(record.traceId, record);
      log(`run ${record.traceId}: cannot take over yet, trying again at the next scan: ${(error as Error).message}`);
    }
  }

  /** Ends the parked runs whose wait passed its deadline (one worker claims each). */
  async function expireWaits(): Promise<void> {
    const now = Date.now();
    for (const record of leases.parked()) {
      if (closing || record.waiting === undefined || Date.parse(record.waiting.deadline) > now) continue;
      // The records are the cluster's parked runs, whoever parked them: no timer of this worker's.
      await host.expire(record.traceId);
    }
  }

  log(`core worker ${owner} serving ${Subject.runStart(prefix)} for ${flowPath}`);
  if (micro !== undefined) log(`NATS micro service ${micro.name} ${micro.id} (nats micro info ${micro.name} ${micro.id})`);
  return {
    owner,
    ...(micro !== undefined && { service: micro }),
    runs: () => host.running(),
    async close() {
      closing = true;
      host.close();
      clearInterval(checkOwnership);
      clearInterval(scan);
      service.unsubscribe();
      aborts.unsubscribe();
      answers.unsubscribe();
      await host.endRuns('stop');
      // Its heartbeat goes at once: the other workers take its runs without waiting for the lease.
      await leases.close();
      await micro?.stop();
      await transport.close();
    },
  };
}
