import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AgentEnvelope, HistoryMessage, HumanQuestion, ParentCall, RunOutcome, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import type { EventStore, LogProblem } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { openJsonlEventStore, type JsonlFsyncMode } from '../events/jsonlEventStore.js';
import { logStatus } from '../events/resumePoint.js';
import type { ChatMessage, ModelActor } from '../actors/model.js';
import type { RunLiveMessage } from '../runtime/serveActors.js';
import { Subject } from '../actors/subjects.js';
import { buildMessages } from '../machines/prompt.js';
import { buildModel } from '../runtime/buildModel.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { contextBudgetFor } from '../runtime/contextBudgetFor.js';
import { admitRun } from '../host/admission.js';
import { asVerifier, serveActors, type ServedActors } from '../runtime/embeddedActors.js';
import { DEFAULT_RUNS_DIR } from '../host/embeddedFlowRun.js';
import { randomIds, type IdSource } from '../runtime/ids.js';
import { readResumableLog } from '../runtime/resumableLog.js';
import { resumeRun, startRun } from '../runtime/runAgent.js';
import type { RunEnvironment, RunHandle, RunResult } from '../runtime/runSession.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import type { GivenAnswer, WaitAnswer } from '../events/pendingWait.js';
import { takeAnswer } from '../host/takeAnswer.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import { createActivityDeriver, type ActivityDeriver, type AgentActivityEvent } from './activity.js';
import { ActivityFeed } from './activityFeed.js';
import { checkAgentDefinition, checkAgentInputs, type AgentDefinition } from './agentDefinition.js';
import { outputOf } from './agentOutput.js';
import { isClientTool, servedToolOf, toolSpecOf, type AgentTool } from './agentTool.js';
import type { DefinitionSubagents, SubagentRunner } from './definitionSubagents.js';
import { renderTemplate } from './template.js';
import { agentConfigOf } from './definitionParts.js';
import { terminateReasonOf, type TerminateReason } from './terminateReason.js';

/**
 * How an {@link AgentExecutor} runs every definition it is given.
 *
 * @example
 * ```ts
 * const executor = new AgentExecutor({ model: createScriptedModel([{ action: 'final', message: 'hi', confidence: 0.9 }]), runsDir: '.redflow/runs' } satisfies AgentExecutorOptions);
 * ```
 */
export interface AgentExecutorOptions {
  /** The model to use instead of the one each definition's `modelConfig` describes (a shared client, a scripted model in tests). */
  readonly model?: ModelActor;
  /** Where runs keep their JSONL logs, `<runsDir>/<traceId>.jsonl`. Default `.redflow/runs`, as `redflow run`. */
  readonly runsDir?: string;
  /** Environment for the model's settings and key. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where a scripted model's `answersFile` is found. Default the working directory. */
  readonly baseDir?: string;
  readonly clock?: Clock;
  readonly ids?: IdSource;
  /** How JSONL logs are synced (default `always`: each event is on disk before the run goes on). */
  readonly fsync?: JsonlFsyncMode;
}

/**
 * Options of one run.
 *
 * @example
 * ```ts
 * const options: ExecuteOptions = { inputs: { question: 'Where is order A-1001?' }, signal: AbortSignal.timeout(60_000) };
 * const result = await executor.execute(agent, options);
 * ```
 */
export interface ExecuteOptions {
  /** The values of the definition's inputs, by name: checked against `inputConfig`, put in for `${name}`. */
  readonly inputs?: Readonly<Record<string, unknown>>;
  /** Aborts the run: it ends `aborted`, and the call under way is cancelled. */
  readonly signal?: AbortSignal;
  /**
   * Sees the run's activity as it happens (see {@link AgentActivityEvent}). A callback that throws
   * loses that event, never the run.
   */
  readonly onActivity?: (event: AgentActivityEvent) => void;
  /** Sees each event once it is in the log. */
  readonly onEvent?: (event: AgentEvent) => void;
  /**
   * Answers the model's questions to a person (its `escalate` and `request_info` actions) in this
   * process: the answer is the model's next observation, and the run goes on. `undefined` leaves
   * the question unanswered: the run ends `escalate` with it at once (`HUMAN_ANSWER_MISSING`), its
   * terminate reason `escalated` or `info_requested`. Without `onQuestion`, a question parks the
   * run in its log like any wait (`RunWaitingError`, `wait.kind` `'human'`), for
   * {@link AgentExecutor.resume} with `{ kind: 'human', text }` or `redflow answer <log>`.
   */
  readonly onQuestion?: (question: HumanQuestion) => string | undefined | Promise<string | undefined>;
  readonly traceId?: string;
  /** The JSONL log to write (must not hold a run yet). Default `<runsDir>/<traceId>.jsonl`. */
  readonly logPath?: string;
  /** Keep the log in this store instead of a JSONL file (e.g. `createMemoryEventStore()`); the caller closes it. */
  readonly store?: EventStore;
  /** The API key for this run's model calls instead of the environment's (never logged). */
  readonly modelApiKey?: string;
  /**
   * The file the definition was loaded from, recorded in the log (`run.started`'s `flow.path`) so
   * `redflow resume <log>` can load it again. `redflow run <file.ts>` sets it.
   */
  readonly modulePath?: string;
  /** The answers file of `redflow run --script`, recorded in the log (`flow.script`) so a resume takes it again. */
  readonly scriptFile?: string;
  /** The call of another run that starts this one as its subagent, logged in `run.started` (the child's link to its parent). */
  readonly parent?: ParentCall;
}

/** Options of {@link AgentExecutor.resume}: the log to continue, by file or by store. */
export type ResumeAgentOptions = Pick<ExecuteOptions, 'signal' | 'onActivity' | 'onEvent' | 'onQuestion' | 'modelApiKey'> &
  ({ readonly logPath: string } | { readonly store: EventStore; readonly traceId: string }) & {
    /** A timeout for this stretch of the run instead of the one it started with. */
    readonly timeoutMs?: number;
    /**
     * The answer to the wait the run is parked in: a person's decision on a call
     * (`{ kind: 'approval', approved, reason? }`), the result of a client tool
     * (`{ kind: 'client', result: { ok: true, output } }`), or a person's answer to the model's
     * question (`{ kind: 'human', text }`), optionally naming the call or question
     * (`idempotencyKey`, `iteration`). Judged against the log first (the run host's `takeAnswer`): one that does
     * not fit is refused with its code before anything is recorded.
     */
    readonly answer?: GivenAnswer | { readonly kind: 'expire' };
  };

/**
 * How a definition's run ended.
 *
 * @example
 * ```ts
 * const result: AgentResult<{ answer: string }> = await executor.execute(agent, { inputs: { question: 'Where is order A-1001?' } });
 * if (result.success) console.log(result.output?.answer);
 * else console.error(result.terminateReason, result.error);
 * ```
 */
export interface AgentResult<TOutput = unknown> {
  /** True when the run reached its goal: a final answer (matching `outputConfig`, when there is one). */
  readonly success: boolean;
  /**
   * The final answer: checked against `outputConfig.schema` (the value a Standard Schema gives, of
   * its output type), or the answer's text without an `outputConfig`.
   */
  readonly output?: TOutput;
  /**
   * With an `outputConfig` and a final answer: true when its output is the one asked for, false
   * when it is not (`errorInfo` says why, `rawContent` holds it as given).
   */
  readonly validated?: boolean;
  /** The answer as the model gave it (a stop condition's: what the run had); `''` without one. */
  readonly rawContent: string;
  readonly terminateReason: TerminateReason;
  /** What went wrong, in words, when something did. */
  readonly error?: string;
  /** The same, as coded data: the run's error, or `AGENT_OUTPUT_INVALID` for an answer that does not match `outputConfig`. */
  readonly errorInfo?: ErrorInfo;
  /** Turns taken: model calls, each with at most one tool call. */
  readonly turnCount: number;
  /** The conversation: the messages the model was last sent, then its last answer. */
  readonly messages: readonly ChatMessage[];
  readonly traceId: string;
  /** The JSONL log (`redflow replay` shows it), when the run kept one. */
  readonly logPath?: string;
  /** The run's outcome and its final envelope (the fold of its log), as for a flow's run. */
  readonly outcome: RunOutcome;
  readonly envelope: AgentEnvelope;
  /** The seq of the run's last event. */
  readonly lastSeq: number;
}

/**
 * A definition's run under way. Iterate it (`for await (const activity of run)`) for its activity
 * from the start; `result` settles when it has ended and its log is closed.
 *
 * @example
 * ```ts
 * const run: AgentRun = await executor.start(agent, { inputs: { question: 'Where is order A-1001?' } });
 * for await (const activity of run) console.log(activity.type);
 * const result = await run.result;
 * ```
 */
export interface AgentRun<TOutput = unknown> extends AsyncIterable<AgentActivityEvent> {
  readonly traceId: string;
  readonly logPath: string | undefined;
  readonly result: Promise<AgentResult<TOutput>>;
  /** The statechart's run (what `startRun` returns), for hosts that need it. */
  readonly handle: RunHandle;
  /** A torn last record of the log that a resume cut off. */
  readonly repaired?: LogProblem;
  /** Ends the run as `aborted`. */
  abort(reason?: string): void;
}

/** The run's input: the task with its variables filled in, or else the inputs themselves. */
function inputOf(definition: AgentDefinition, inputs: Readonly<Record<string, unknown>>): unknown {
  const { query } = definition.promptConfig;
  return query === undefined ? inputs : renderTemplate(query, inputs, 'promptConfig.query');
}

function historyOf(definition: AgentDefinition, inputs: Readonly<Record<string, unknown>>): HistoryMessage[] | undefined {
  return definition.promptConfig.initialMessages?.map((message, i) => ({
    role: message.role,
    content: renderTemplate(message.content, inputs, `promptConfig.initialMessages[${i}]`),
  }));
}

/** The conversation as the model last saw it, then its last answer when that is not in it already (a final answer). */
function messagesOf(envelope: AgentEnvelope): ChatMessage[] {
  const prompt = envelope.model?.lastPrompt;
  if (prompt === undefined) return [];
  const messages = buildMessages(prompt, envelope);
  const last = envelope.model?.lastResponse;
  if (last !== undefined && envelope.state.lastAction !== 'tool') {
    messages.push({ role: 'assistant', content: typeof last === 'string' ? last : JSON.stringify(last) });
  }
  return messages;
}

/** Turns a run's result into the definition's {@link AgentResult}. */
async function agentResult<TOutput>(definition: AgentDefinition<TOutput>, run: RunResult, logPath: string | undefined): Promise<AgentResult<TOutput>> {
  const { outcome, envelope } = run;
  const output = await outputOf(definition as AgentDefinition, outcome);
  const failure = (outcome.error as ErrorInfo | undefined) ?? output.error;
  return {
    success: outcome.status === 'done' && output.error === undefined,
    ...(output.value !== undefined && { output: output.value as TOutput }),
    ...(output.validated !== undefined && { validated: output.validated }),
    rawContent: outcome.answer ?? (outcome.output === undefined ? '' : (JSON.stringify(outcome.output) ?? '')),
    terminateReason: terminateReasonOf(outcome),
    ...(failure !== undefined && { error: failure.message, errorInfo: failure }),
    turnCount: envelope.state.iteration,
    messages: messagesOf(envelope),
    traceId: run.traceId,
    ...(logPath !== undefined && { logPath }),
    outcome,
    envelope,
    lastSeq: run.lastSeq,
  };
}

/** Calls `callback` so that its failure stays its own: a viewer's bug never stops the run. */
function safely<T>(callback: ((value: T) => void) | undefined, value: T): void {
  try {
    callback?.(value);
  } catch {
    // Dropped: the run and its log are what count; the activity is a view of them.
  }
}

/** The part of a run's environment that is the same for each stretch of it (start, resumes). */
type Environment = Pick<RunEnvironment, 'transport' | 'subjects' | 'store' | 'signal' | 'clock' | 'contextBudget' | 'modelName' | 'onEvent'>;

/** What follows a run once it is started: where it runs, its activity, and how to go on after a question. */
interface RunParts {
  readonly hosted: Hosted;
  readonly feed: ActivityFeed;
  readonly chunks: { unsubscribe(): void };
  readonly environment: Environment;
  readonly onQuestion: ExecuteOptions['onQuestion'];
  readonly repaired?: LogProblem;
}

/** What a run of a definition needs from this process: its actors, served, and a log. */
interface Hosted {
  readonly served: ServedActors;
  /** The definition's tools as the run records them: every tool, the client's too, with its JSON Schema. */
  readonly tools: readonly ToolSpec[];
  readonly store: EventStore;
  readonly logPath: string | undefined;
  /** Closes the log (when opened here) and stops the actors. */
  close(): Promise<void>;
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
    const deriver = createActivityDeriver();
    const feed = new ActivityFeed();
    const show = this.#shower(feed, options.onActivity);
    const chunks = this.#followChunks(hosted.served, traceId, deriver, show);
    const environment = this.#environment(hosted, options, deriver, show, contextBudget);
    let handle: RunHandle;
    try {
      handle = startRun({
        ...environment,
        agent,
        tools: hosted.tools,
        input,
        traceId,
        flow: { id: definition.name, ...(options.modulePath !== undefined && { path: path.resolve(options.modulePath) }), ...(options.scriptFile !== undefined && { script: options.scriptFile }) },
        ...(history !== undefined && { history }),
        ...(options.parent !== undefined && { parent: options.parent }),
        ...(definition.runConfig?.timeoutMs !== undefined && { timeoutMs: definition.runConfig.timeoutMs }),
      });
    } catch (error) {
      chunks.unsubscribe();
      await hosted.close();
      throw error;
    }
    return this.#run(definition, handle, { hosted, feed, chunks, environment, onQuestion: options.onQuestion });
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
    const deriver = createActivityDeriver();
    // The activity so far is the log's: the deriver learns it (which turn is open) without showing it again.
    for (const event of events) deriver.event(event);
    const feed = new ActivityFeed();
    const show = this.#shower(feed, options.onActivity);
    const chunks = this.#followChunks(hosted.served, traceId, deriver, show);
    const environment = this.#environment(hosted, options, deriver, show, contextBudget);
    let handle: RunHandle;
    try {
      handle = resumeRun({
        ...environment,
        agent: started.agent,
        tools: started.tools,
        events: current,
        ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
        ...(answer !== undefined && { answer }),
      });
    } catch (error) {
      chunks.unsubscribe();
      await hosted.close();
      throw error;
    }
    return this.#run(definition, handle, { hosted, feed, chunks, environment, onQuestion: options.onQuestion, ...(repaired !== undefined && { repaired }) });
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
    const { checkSubagentTree, definitionSource, definitionSubagents, resolveSubagents } = await import('./definitionSubagents.js');
    const from = modulePath ?? definitionSource(definition);
    const baseDir = from === undefined ? process.cwd() : path.dirname(path.resolve(from));
    await checkSubagentTree(definition, baseDir);
    const { model: _parentsOnly, ...shared } = this.options;
    const children = new AgentExecutor(shared);
    // A subagent runs unattended: a question to a person is left unanswered (its run ends escalated).
    const unattended = () => undefined;
    const runner: SubagentRunner = {
      run: async (child, run) => {
        const source = definitionSource(child);
        // The task is the child's input: its query, unless it has its own that uses ${task}.
        const definitionForTask = child.promptConfig.query === undefined && child.inputConfig === undefined ? { ...child, promptConfig: { ...child.promptConfig, query: '${task}' } } : child;
        const started = await children.start(definitionForTask, {
          inputs: { task: run.input },
          traceId: run.traceId,
          logPath: run.logPath,
          parent: run.parent,
          signal: run.signal,
          onQuestion: unattended,
          ...(source !== undefined && { modulePath: source }),
        });
        return { finished: () => started.handle.result };
      },
      resume: async (child, run) => {
        const resumed = await children.resume(child, { logPath: run.logPath, signal: run.signal, onQuestion: unattended, ...(run.answer !== undefined && { answer: run.answer }) });
        return { finished: () => resumed.handle.result };
      },
    };
    return definitionSubagents(await resolveSubagents(definition, baseDir), runsDir, runner);
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
