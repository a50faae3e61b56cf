import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { EventStore, LogProblem } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { openJsonlEventStore } from '../events/jsonlEventStore.js';
import { logStatus } from '../events/resumePoint.js';
import type { ModelActor } from '../actors/model.js';
import type { RunLiveMessage } from '../runtime/serveActors.js';
import { Subject } from '../actors/subjects.js';
import { buildModel } from '../runtime/buildModel.js';
import { systemClock } from '../runtime/clock.js';
import { contextBudgetFor } from '../runtime/contextBudgetFor.js';
import { admitRun } from '../host/admission.js';
import { asVerifier, serveActors, type ServedActors } from '../runtime/embeddedActors.js';
import { DEFAULT_RUNS_DIR } from '../host/embeddedFlowRun.js';
import { randomIds } from '../runtime/ids.js';
import { readResumableLog } from '../runtime/resumableLog.js';
import { resumeRun, startRun } from '../runtime/runAgent.js';
import type { RunHandle, RunResult } from '../runtime/runSession.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import { takeAnswer } from '../host/takeAnswer.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import { createActivityDeriver, type ActivityDeriver, type AgentActivityEvent } from './activity.js';
import { ActivityFeed } from './activityFeed.js';
import { checkAgentDefinition, checkAgentInputs, type AgentDefinition } from './agentDefinition.js';
import { agentResult } from './agentOutput.js';
import { isClientTool, servedToolOf, toolSpecOf, type AgentTool } from './agentTool.js';
import type { DefinitionSubagents } from './definitionSubagents.js';
import { agentConfigOf, historyOf, inputOf } from './definitionParts.js';
import type { AgentExecutorOptions, AgentResult, AgentRun, Environment, ExecuteOptions, Hosted, Launch, ResumeAgentOptions, RunParts } from './agentExecutorTypes.js';

export type { AgentExecutorOptions, AgentResult, AgentRun, ExecuteOptions, ResumeAgentOptions } from './agentExecutorTypes.js';

/** Calls `callback` so that its failure stays its own: a viewer's bug never stops the run. */
function safely<T>(callback: ((value: T) => void) | undefined, value: T): void {
  try {
    callback?.(value);
  } catch {
    // Dropped: the run and its log are what count; the activity is a view of them.
  }
}

/**
 * Runs {@link AgentDefinition}s. A façade over the flow runtime: a definition becomes an agent
 * config (its prompt filled in from the inputs), a model (built from `modelConfig`) and tools,
 * served in this process, and runs through the same statechart and event log as a flow, so each
 * run is logged (a JSONL file by default), replayed with `redflow replay`, and resumed with
 * {@link AgentExecutor.resume} or `redflow resume` after a crash. A run that comes to a wait (a
 * tool that `requiresApproval`, a client tool, the model's question to a person when no
 * `onQuestion` answers it) is parked in its log, and resumed with its answer.
 *
 * @example
 * ```ts
 * const executor = new AgentExecutor();
 * const result = await executor.execute(reviewer, { inputs: { file: 'src/index.ts' }, onActivity: (a) => console.log(a.type) });
 * if (result.success) console.log(result.output);
 * ```
 */
export class AgentExecutor {
  constructor(private readonly options: AgentExecutorOptions = {}) {}

  /**
   * Runs `definition` to its end and returns how it went. A run that ends without its goal (an
   * error, a timeout, an abort, too many turns) resolves too, with `success: false` and why.
   *
   * @throws RedflowError before anything is recorded: `AGENT_DEFINITION_INVALID`,
   *   `AGENT_INPUT_INVALID`, `TEMPLATE_VARIABLE_MISSING`, the model's configuration errors
   *   (`MODEL_CONFIG_INVALID`, `MODEL_KEY_MISSING`, …), `RUN_INPUT_TOO_LARGE`; a log that holds a
   *   run already (`CLI_USAGE`). A log that fails mid-run rejects with its code.
   * @throws RunWaitingError (`RUN_WAITING`) when the run comes to a wait for an approval, a
   *   client tool's result, or (without `onQuestion`) a person's answer to the model's question, as
   *   a flow's run does: it is parked in its log (`error.wait` says for what, until when);
   *   {@link AgentExecutor.resume} with the `answer`, or `redflow approve|deny|tool-result|answer <log>`,
   *   goes on with it.
   */
  async execute<TOutput>(definition: AgentDefinition<TOutput>, options: ExecuteOptions = {}): Promise<AgentResult<TOutput>> {
    return (await this.start(definition, options)).result;
  }

  /**
   * Starts `definition` and returns its run once its log is open: iterate it for its activity,
   * await `result` for how it ended. Throws what {@link AgentExecutor.execute} throws before a run.
   */
  async start<TOutput>(definition: AgentDefinition<TOutput>, options: ExecuteOptions = {}): Promise<AgentRun<TOutput>> {
    checkAgentDefinition(definition);
    const inputs = options.inputs ?? {};
    checkAgentInputs(definition, inputs);
    const runsDir = options.logPath !== undefined ? path.dirname(path.resolve(options.logPath)) : (this.options.runsDir ?? DEFAULT_RUNS_DIR);
    const subagents = await this.#subagents(definition, runsDir, options.modulePath);
    // The REACT_CYCLE's instructions, loaded with the first definition that has one (off `import 'redflow'`'s path).
    const { reactCycle } = definition.promptConfig;
    const cycle = reactCycle === undefined ? '' : (await import('./reactCycle.js')).reactCycleInstructions(reactCycle);
    const agent = agentConfigOf(definition, inputs, subagents, cycle);
    const input = inputOf(definition, inputs);
    const history = historyOf(definition, inputs);
    const contextBudget = await contextBudgetFor(definition.modelConfig);
    // Admitted once, before the model is built and the log opened.
    admitRun({ input, agent, tools: [...(definition.toolConfig?.tools ?? []).map(toolSpecOf), ...subagents.specs], ...(contextBudget !== undefined && { contextBudget }) });
    const traceId = options.traceId ?? (this.options.ids ?? randomIds).traceId();
    const model = await this.#model(definition, options.modelApiKey);
    const hosted = await this.#host(definition, model, options.store ?? (options.logPath ?? path.join(runsDir, `${traceId}.jsonl`)), subagents);
    return this.#launch(definition, { hosted, traceId, options, contextBudget, logged: [] }, (environment) =>
      startRun({
        ...environment,
        agent,
        tools: hosted.tools,
        input,
        traceId,
        flow: { id: definition.name, ...(options.modulePath !== undefined && { path: path.resolve(options.modulePath) }), ...(options.scriptFile !== undefined && { script: options.scriptFile }) },
        ...(history !== undefined && { history }),
        ...(options.parent !== undefined && { parent: options.parent }),
        ...(definition.runConfig?.timeoutMs !== undefined && { timeoutMs: definition.runConfig.timeoutMs }),
      }),
    );
  }

  /**
   * Continues a run of `definition` that was interrupted (a crash, a stopped process) or parked in a
   * wait (with `answer`) from its log: its agent config and tools' descriptions come from the log,
   * its model and tools from `definition` (so a tool's schemas check a resumed run's calls as they
   * did the first run's). A finished run resolves at once with its result. The activity starts
   * where the log ends.
   *
   * @throws RedflowError `AGENT_DEFINITION_INVALID`; a damaged log (`LOG_RECORD_CORRUPT`,
   *   `LOG_PATH_INVALID`, …); `LOG_CONCURRENT_WRITER` when another process holds it (with an answer,
   *   `WAIT_ALREADY_ANSWERED`: that process took the run first); an answer that
   *   does not fit the wait (`RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`, `WAIT_ANSWER_MISMATCH`,
   *   `RUN_ALREADY_FINISHED`). Its `result` rejects with `RunWaitingError` when the run waits again.
   */
  async resume<TOutput>(definition: AgentDefinition<TOutput>, options: ResumeAgentOptions): Promise<AgentRun<TOutput>> {
    checkAgentDefinition(definition);
    let events: readonly AgentEvent[];
    let repaired: LogProblem | undefined;
    if ('logPath' in options) {
      const read = await readResumableLog(path.resolve(options.logPath));
      events = read.events;
      repaired = read.repaired;
    } else {
      const read = await options.store.read(options.traceId);
      const [damage] = read.problems;
      if (damage) throw new RedflowError(errorInfo(damage.code, `the log of ${options.traceId}, event ${damage.position}: ${damage.message}`));
      events = read.events;
    }
    const { started } = logStatus(events);
    const traceId = (events[0] as AgentEvent).traceId;
    const prepare = async () => {
      const model = await this.#model(definition, options.modelApiKey);
      const contextBudget = await contextBudgetFor(definition.modelConfig);
      const runsDir = 'logPath' in options ? path.dirname(path.resolve(options.logPath)) : (this.options.runsDir ?? DEFAULT_RUNS_DIR);
      const subagents = await this.#subagents(definition, runsDir, undefined);
      return { contextBudget, hosted: await this.#host(definition, model, 'logPath' in options ? options.logPath : options.store, subagents, true) };
    };
    let prepared: Awaited<ReturnType<typeof prepare>> | undefined;
    let current = events;
    let answer: WaitAnswer | undefined;
    if (options.answer === undefined) prepared = await prepare();
    else {
      // The run host's answer: judged before anything is opened, and again under the log's lock
      // (another process may have answered the wait first); one past its deadline is its expiry.
      const taken = await takeAnswer(traceId, options.answer, {
        read: async () => events,
        ownership: {
          take: async () => {
            prepared = await prepare();
            return { events: (await prepared.hosted.store.read(traceId)).events };
          },
          release: async () => prepared?.hosted.close(),
        },
        resume: (run) => run,
        now: () => (this.options.clock ?? systemClock).now(),
      });
      current = (taken as NonNullable<typeof taken>).resumed.events;
      answer = (taken as NonNullable<typeof taken>).resumed.answer;
    }
    const { contextBudget, hosted } = prepared as NonNullable<typeof prepared>;
    return this.#launch(definition, { hosted, traceId, options, contextBudget, logged: events, ...(repaired !== undefined && { repaired }) }, (environment) =>
      resumeRun({
        ...environment,
        agent: started.agent,
        tools: started.tools,
        events: current,
        ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
        ...(answer !== undefined && { answer }),
      }),
    );
  }

  /**
   * Starts a stretch of a run (`begin`: a start or a resume) with its activity followed: what the
   * log holds already (`logged`) is learnt without being shown again. A stretch that fails to
   * start closes what was opened for it.
   */
  async #launch<TOutput>(definition: AgentDefinition<TOutput>, launch: Launch, begin: (environment: Environment) => RunHandle): Promise<AgentRun<TOutput>> {
    const { hosted, traceId, options, contextBudget } = launch;
    const deriver = createActivityDeriver();
    for (const event of launch.logged) deriver.event(event);
    const feed = new ActivityFeed();
    const show = this.#shower(feed, options.onActivity);
    const chunks = this.#followChunks(hosted.served, traceId, deriver, show);
    const environment = this.#environment(hosted, options, deriver, show, contextBudget);
    let handle: RunHandle;
    try {
      handle = begin(environment);
    } catch (error) {
      chunks.unsubscribe();
      await hosted.close();
      throw error;
    }
    return this.#run(definition, handle, { hosted, feed, chunks, environment, onQuestion: options.onQuestion, ...(launch.repaired !== undefined && { repaired: launch.repaired }) });
  }

  /** What every stretch of one run shares: its actors, log, clock, signal, context budget, and where its events go. */
  #environment(
    hosted: Hosted,
    options: Pick<ExecuteOptions, 'signal' | 'onEvent'>,
    deriver: ActivityDeriver,
    show: (activity: AgentActivityEvent) => void,
    contextBudget: ContextBudget | undefined,
  ): Environment {
    return {
      transport: hosted.served.transport,
      subjects: hosted.served.subjects,
      store: hosted.store,
      ...(options.signal !== undefined && { signal: options.signal }),
      ...(this.options.clock !== undefined && { clock: this.options.clock }),
      ...(contextBudget !== undefined && { contextBudget }), ...(hosted.served.modelName !== undefined && { modelName: hosted.served.modelName }),
      onEvent: (event) => {
        safely(options.onEvent, event);
        for (const activity of deriver.event(event)) show(activity);
      },
    };
  }

  async #model(definition: AgentDefinition, modelApiKey: string | undefined): Promise<ModelActor> {
    if (this.options.model !== undefined) return this.options.model;
    return buildModel(
      { model: { nodeId: 'model', config: definition.modelConfig }, baseDir: this.options.baseDir ?? process.cwd() },
      { ...(this.options.env !== undefined && { env: this.options.env }), ...(modelApiKey !== undefined && { modelApiKey }) },
    );
  }

  /** The definition's own verifier model (`runConfig.verification.model`), when it names one. */
  async #verifier(definition: AgentDefinition): Promise<ModelActor | undefined> {
    const verification = definition.runConfig?.verification;
    if (typeof verification !== 'object' || typeof verification.model !== 'object') return undefined;
    const model = await buildModel(
      { model: { nodeId: 'verifier', config: verification.model }, baseDir: this.options.baseDir ?? process.cwd() },
      this.options.env !== undefined ? { env: this.options.env } : {},
    );
    return asVerifier(model);
  }

  /**
   * Serves the definition's actors (its model, and the tools Redflow runs, each checking its calls
   * with its schemas) and opens its log: a JSONL file at `log`, or the store given.
   */
  async #host(definition: AgentDefinition, model: ModelActor, log: string | EventStore, subagents: DefinitionSubagents, resuming = false): Promise<Hosted> {
    const definitionTools = definition.toolConfig?.tools ?? [];
    const tools = [...definitionTools.map(toolSpecOf), ...subagents.specs];
    const run = [...definitionTools.filter((tool): tool is AgentTool => !isClientTool(tool)).map(servedToolOf), ...subagents.tools];
    const verifier = await this.#verifier(definition);
    const served = serveActors({ model, ...(verifier !== undefined && { verifier: { model: verifier, id: 'verifier' } }), tools: run });
    if (typeof log !== 'string') return { served, tools, store: log, logPath: undefined, close: () => served.close() };
    const logPath = path.resolve(log);
    let store;
    try {
      await mkdir(path.dirname(logPath), { recursive: true });
      store = await openJsonlEventStore(logPath, this.options.fsync === undefined ? {} : { fsync: this.options.fsync });
    } catch (error) {
      await served.close();
      throw error;
    }
    if (!resuming && store.lastSeq() > 0) {
      await store.close();
      await served.close();
      throw new RedflowError(
        errorInfo(ErrorCode.CLI_USAGE, `${logPath} already holds a run`, { hint: 'resume it (AgentExecutor.resume, redflow resume), or give another logPath' }),
      );
    }
    const opened = store;
    return {
      served,
      tools,
      store: opened,
      logPath,
      async close() {
        await opened.close();
        // A run that failed before its first event leaves no empty log behind.
        if (!resuming && opened.lastSeq() === 0) await rm(logPath, { force: true });
        await served.close();
      },
    };
  }

  /**
   * The definition's subagents, checked (no cycle, not too deep) and served as tools whose calls
   * are child runs of this executor's settings, each on its own model (a `model` override is the
   * parent's only), logged beside the caller's log in `runsDir`.
   */
  async #subagents(definition: AgentDefinition, runsDir: string, modulePath: string | undefined): Promise<DefinitionSubagents> {
    if ((definition.subagents ?? []).length === 0) return { specs: [], tools: [] };
    // Loaded with the first definition that has subagents: off the path of `import 'redflow'`.
    const { subagentsOf } = await import('./definitionSubagents.js');
    const { model: _parentsOnly, ...shared } = this.options;
    return subagentsOf(definition, runsDir, modulePath, new AgentExecutor(shared));
  }

  /** Where each activity goes: the run's feed, and the caller's callback. */
  #shower(feed: ActivityFeed, onActivity: ((event: AgentActivityEvent) => void) | undefined): (activity: AgentActivityEvent) => void {
    return (activity) => {
      feed.push(activity);
      safely(onActivity, activity);
    };
  }

  /** The answers' pieces, live, from the run's chunk subject. */
  #followChunks(served: ServedActors, traceId: string, deriver: ActivityDeriver, show: (activity: AgentActivityEvent) => void) {
    return served.transport.subscribe(Subject.runChunk(served.prefix, traceId), (message) => {
      for (const activity of deriver.chunk(message.data as RunLiveMessage)) show(activity);
    });
  }

  #run<TOutput>(definition: AgentDefinition<TOutput>, first: RunHandle, run: RunParts): AgentRun<TOutput> {
    const { hosted, feed, chunks } = run;
    let current = first;
    const settle = async (): Promise<RunResult> => {
      for (;;) {
        try {
          return await current.result;
        } catch (error) {
          // The model asked a person. Without onQuestion the run stays parked in its log, as for its
          // other waits: whoever holds the answer resumes it (AgentExecutor.resume, redflow answer),
          // maybe in another process, days later. With one, it is answered here, or (undefined) not
          // at all: the run ends escalated, as a host that cannot hold a run ends it.
          if (!isRunWaiting(error) || error.wait.kind !== 'human' || run.onQuestion === undefined) throw error;
          const { wait } = error;
          const text = wait.question === undefined ? undefined : await run.onQuestion(wait.question);
          const answer: WaitAnswer = text === undefined ? { kind: 'expire' } : { kind: 'human', text, idempotencyKey: wait.idempotencyKey };
          const taken = await takeAnswer(error.traceId, answer, {
            read: async (traceId) => (await hosted.store.read(traceId)).events,
            resume: ({ events, answer: given }) => {
              const { started } = logStatus(events);
              return resumeRun({ ...run.environment, agent: started.agent, tools: started.tools, events, answer: given });
            },
            now: () => (this.options.clock ?? systemClock).now(),
          });
          current = (taken as NonNullable<typeof taken>).resumed;
        }
      }
    };
    const finished = (async () => {
      try {
        return await settle();
      } finally {
        chunks.unsubscribe();
        feed.end();
        await hosted.close();
      }
    })();
    const result = finished.then((ended) => agentResult(definition, ended, hosted.logPath));
    // Whoever only iterates the activity must not see an unhandled rejection; `result` still rejects.
    result.catch(() => undefined);
    finished.catch(() => undefined);
    // One handle for the whole run, whichever stretch of it is under way.
    const handle: RunHandle = {
      traceId: first.traceId,
      result: finished,
      abort: (reason) => current.abort(reason),
      stop: () => current.stop(),
      actor: () => current.actor(),
    };
    return {
      traceId: first.traceId,
      logPath: hosted.logPath,
      result,
      handle,
      ...(run.repaired !== undefined && { repaired: run.repaired }),
      abort: (reason) => current.abort(reason),
      [Symbol.asyncIterator]: () => feed[Symbol.asyncIterator](),
    };
  }
}
