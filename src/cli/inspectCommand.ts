import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import type { InspectionEvent } from 'xstate';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ReadResult } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { DEFAULT_RELAY_BUFFER, DEFAULT_RELAY_PORT } from '../inspect/relayDefaults.js';
import type { InspectSession, InspectSessionOptions } from '../inspect/inspectSession.js';
import { DEFAULT_RUNS_DIR } from '../host/embeddedFlowRun.js';
import { isValidTraceId, randomIds } from '../runtime/ids.js';
import { help, parse, usageError } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exitCodes.js';
import { RUN_PAGE_WAIT_MS, sayInspectorIsHosted, sayWhatThePageShowed } from './inspectorPage.js';
import { natsOptionSpecs, natsOptionsHelp, natsUrl } from './natsOptions.js';
import { line, styles, type Output } from './output.js';

type Values = Record<string, string | boolean | undefined>;

/** The options that choose where inspector messages go (`run --inspect` and `inspect`). */
export const inspectOptionSpecs: NonNullable<ParseArgsConfig['options']> = {
  'inspect-port': { type: 'string' },
  'inspect-url': { type: 'string' },
  // node:util's parseArgs (Node 20) has no negated booleans: --no-open is an option of its own.
  'no-open': { type: 'boolean' },
};

/** The help text of {@link inspectOptionSpecs}. */
export const inspectOptionsHelp = `Stately inspector:
  --inspect-port <n>      the port of the relay redflow starts (default ${DEFAULT_RELAY_PORT}; 0: any free port);
                          its page, http://127.0.0.1:<n>, shows the Stately inspector: a hosted
                          page (stately.ai), so the browser needs internet access
  --inspect-url <ws-url>  send to a relay or receiver already running (e.g. ws://127.0.0.1:8080); start none
  --no-open               do not open the relay's page in the browser`;

/** The session options the flags ask for; usage errors for flags that contradict each other. */
export function inspectSessionOptions(values: Values, usage: string, output: Output): InspectSessionOptions {
  const url = values['inspect-url'] as string | undefined;
  const portText = values['inspect-port'] as string | undefined;
  if (url !== undefined && portText !== undefined) {
    throw usageError('give --inspect-url (a relay already running) or --inspect-port (the relay to start), not both', usage);
  }
  if (url !== undefined && !/^wss?:\/\/[^/\s]+/.test(url)) throw usageError(`--inspect-url must be a WebSocket URL like ws://127.0.0.1:8080, not "${url}"`, usage);
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d+$/.test(portText) || port > 65_535) throw usageError(`--inspect-port must be a port number (0–65535), not "${portText}"`, usage);
  }
  const s = styles(output.color);
  return {
    ...(url !== undefined ? { url } : { open: !values['no-open'], ...(port !== undefined && { port }) }),
    onError: (error) => line(output.err, s.yellow(`warning ${error.code}: ${error.message}${error.hint ? ` (${error.hint})` : ''}`)),
  };
}

/**
 * Resolves on the first Ctrl-C (or SIGTERM): how a relay is told it may stop. An aborted `signal`
 * gives the signals back to Node's default (the promise then never resolves).
 */
function untilInterrupted(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    signal?.addEventListener('abort', () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    });
  });
}

/** Says where the inspector is, on stderr (stdout may be the run's JSON). */
function announce(session: InspectSession, output: Output): void {
  const s = styles(output.color);
  if (session.pageUrl === undefined) {
    line(output.err, s.dim(`inspector: sending to ${session.socketUrl}`));
    return;
  }
  line(output.err, s.cyan(`inspector: ${session.pageUrl}${session.opened ? ' (opening in your browser)' : ' (open it in a browser)'}`));
  sayInspectorIsHosted(output);
}

/** What `redflow run --inspect` needs from the inspector. */
export interface RunInspector {
  /** The trace id the run gets (the one given, or a new one) and the observer of its statechart. */
  embedded(traceId: string | undefined): { readonly traceId: string; readonly inspect: (event: InspectionEvent) => void };
  /** The progress printer, also replaying each event into the inspector as it arrives (`--nats`). */
  following<P extends { onEvent(event: AgentEvent): void }>(progress: P): P;
  /**
   * After the run: waits until everything is sent; with redflow's relay, until its page has the
   * run (or found the hosted inspector cannot load), at most {@link RUN_PAGE_WAIT_MS}.
   */
  finish(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `run`'s inspector, when `--inspect` is given (else undefined; the inspector flags without it are
 * a usage error). Opens the session before the run starts, so an inspector that cannot be
 * reached stops the command (INSPECT_UNAVAILABLE, exit 69) instead of a run going uninspected.
 *
 * In embedded mode the run's own statechart is inspected live. With `--nats` the statechart runs
 * in a core worker, so the run's events are replayed into the inspector as they arrive (the same
 * view as `redflow inspect`); that needs the events, so not with `--json`.
 */
export async function openRunInspector(values: Values, usage: string, output: Output, mode: { readonly json: boolean }): Promise<RunInspector | undefined> {
  if (!values.inspect) {
    for (const flag of ['inspect-port', 'inspect-url', 'no-open'] as const) {
      if (values[flag] !== undefined) throw usageError(`--${flag} needs --inspect`, usage);
    }
    return undefined;
  }
  if (natsUrl(values) && mode.json) throw usageError('--inspect with --nats follows the printed events, so it cannot be combined with --json', usage);
  // The inspector (its relay, a WebSocket server, @statelyai/inspect) loads only when asked for.
  const { openInspectSession } = await import('../inspect/inspectSession.js');
  const session = await openInspectSession(inspectSessionOptions(values, usage, output));
  announce(session, output);
  let inspectedTraceId: string | undefined;
  return {
    embedded(traceId) {
      // The inspector names the run's actor after its trace id, so the id is chosen here, before the run.
      const id = traceId ?? randomIds.traceId();
      inspectedTraceId = id;
      return { traceId: id, inspect: session.inspectRun(id) };
    },
    following(progress) {
      const follow = session.follow();
      return {
        ...progress,
        onEvent(event: AgentEvent) {
          progress.onEvent(event);
          follow(event);
        },
      };
    },
    async finish() {
      await session.flush();
      if (session.pageUrl === undefined) return;
      // The page may not have opened yet: the relay keeps the run for it, but not for ever, nor
      // past a Ctrl-C. Closing the session then lets the page read what it was sent.
      const waited = new AbortController();
      const state = await Promise.race([session.waitForPage(RUN_PAGE_WAIT_MS), untilInterrupted(waited.signal).then(() => undefined)]);
      waited.abort();
      const log = (values.log as string | undefined) ?? inspectedTraceId ?? '<traceId>';
      const again = `\`redflow inspect ${log}${natsUrl(values) ? ' --nats <url>' : ''}\``;
      if (state !== undefined) sayWhatThePageShowed(state, session.pageUrl, again, output);
    },
    close: () => session.close(),
  };
}

/** Whether `target` names an existing file. */
async function isFile(target: string): Promise<boolean> {
  try {
    return (await stat(target)).isFile();
  } catch {
    return false;
  }
}

/**
 * Reads the log `inspect` was given: a JSONL file; or a trace id, from JetStream with NATS (flag or
 * NATS_URL), else from `.redflow/runs/<traceId>.jsonl`.
 */
async function readLog(target: string, values: Values, usage: string): Promise<{ readonly read: ReadResult; readonly source: string }> {
  const file = await isFile(target);
  const looksLikeFile = file || target.endsWith('.jsonl') || target.includes('/') || target.includes(path.sep);
  if (looksLikeFile) {
    if (values.nats !== undefined) throw usageError(`with --nats, give the run's trace id, not a file (${target})`, usage);
    return { read: await readJsonlLog(path.resolve(target)), source: target };
  }
  if (!isValidTraceId(target)) throw usageError(`"${target}" is neither a log file nor a trace id`, usage);
  if (natsUrl(values)) {
    const { readClusterLog } = await import('./clusterRun.js');
    const read = await readClusterLog(values, target);
    if (read.events.length === 0 && read.problems.length === 0) {
      throw new RedflowError(
        errorInfo(ErrorCode.LOG_NOT_FOUND, `JetStream holds no events of run ${target}`, {
          hint: 'check the trace id and --prefix (`redflow tail --nats <url>` lists runs as they happen)',
        }),
      );
    }
    return { read, source: `JetStream, run ${target}` };
  }
  const defaultLog = path.join(DEFAULT_RUNS_DIR, `${target}.jsonl`);
  if (!(await isFile(defaultLog))) {
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_NOT_FOUND, `there is no file ${target}, nor a log ${defaultLog}`, {
        hint: "give the run's .jsonl file, or for a cluster run its trace id with --nats <url>",
      }),
    );
  }
  return { read: await readJsonlLog(path.resolve(defaultLog)), source: defaultLog };
}

const inspectUsage = `usage: redflow inspect <log.jsonl | traceId> [--inspect-port <n> | --inspect-url <ws-url>] [--no-open] [--json]
       redflow inspect <traceId> --nats <url> [...]

Replays a run's event log into the Stately inspector, so its statechart can be stepped through
after the fact: the REACT machine's chart, then for each event the event and the state after it
(awaitingModel, validating, awaitingTool, checkingStop, done or error) with the envelope folded so
far. By default it starts a relay on port ${DEFAULT_RELAY_PORT}, opens its page in the browser and keeps
serving until Ctrl-C; with --inspect-url it sends to a relay already running and exits once all is sent.
A trace id is read from JetStream with --nats (or NATS_URL), else from ${DEFAULT_RUNS_DIR}/<traceId>.jsonl.
A damaged log is reported, and the events before the damage are sent.
  --json                  print what was sent as JSON on stdout
Exit codes: 0 sent (and, with the relay, stopped with Ctrl-C), 64 usage, 65 damaged or empty log,
66 no such log or run, 69 the inspector (or NATS) cannot be reached or the relay's port is taken.

${inspectOptionsHelp}

${natsOptionsHelp}`;

/** `redflow inspect`: a finished (or unfinished) run's log, replayed into the Stately inspector. */
export const inspect: Command = {
  name: 'inspect',
  usage: inspectUsage,
  async run(args, output) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, ...inspectOptionSpecs, ...natsOptionSpecs }, inspectUsage);
    if (values.help) return help(output, inspectUsage);
    const [target, ...extra] = positionals;
    if (!target) throw usageError('which run? give its .jsonl log, or its trace id', inspectUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, inspectUsage);
    const sessionOptions = inspectSessionOptions(values, inspectUsage, output);
    const { read, source } = await readLog(target, values, inspectUsage);
    const s = styles(output.color);
    for (const problem of read.problems) line(output.err, s.red(`line ${problem.position}: ${problem.code} ${problem.message}`));
    if (read.events.length === 0) {
      throw new RedflowError(
        errorInfo(ErrorCode.LOG_EMPTY, `${source} holds no event that can be read`, { hint: 'a run writes run.started first; is this the right file?' }),
      );
    }
    const { openInspectSession } = await import('../inspect/inspectSession.js');
    const session = await openInspectSession(sessionOptions);
    try {
      const sent = session.replay(read.events);
      await session.flush();
      const damaged = read.problems.some((problem) => problem.code !== ErrorCode.LOG_RECORD_TORN);
      if (values.json) {
        line(output.out, JSON.stringify({ ...sent, problems: read.problems, socketUrl: session.socketUrl, pageUrl: session.pageUrl ?? null }, null, 2));
      } else {
        line(output.out, `sent run ${sent.traceId} to the inspector: ${sent.events} events, ${sent.messages} messages (from ${source})`);
        if (sent.forkOf !== undefined) {
          const { parent, atIteration } = sent.forkOf;
          line(output.out, `a fork of run ${parent.traceId} at iteration ${atIteration}: redflow inspect ${parent.log ?? parent.traceId} shows its parent`);
        }
        if (session.pageUrl === undefined) line(output.out, `to ${session.socketUrl}`);
        else line(output.out, `open ${session.pageUrl} to step through it${session.opened ? ' (opening in your browser)' : ''}`);
      }
      if (session.pageUrl !== undefined) {
        const pageUrl = session.pageUrl;
        sayInspectorIsHosted(output);
        // Told once, while it serves: a page that cannot load the hosted inspector is not silent.
        void session.waitForPage().then((state) => {
          if (state === 'unavailable') sayWhatThePageShowed(state, pageUrl, '', output);
        });
        if (sent.messages > DEFAULT_RELAY_BUFFER) {
          line(output.err, s.yellow(`the relay keeps the last ${DEFAULT_RELAY_BUFFER} messages: a page opened from now on misses the start of the run`));
        }
        line(output.err, s.dim('Ctrl-C stops the relay'));
        await untilInterrupted();
      }
      return damaged ? ExitCode.DataError : ExitCode.Ok;
    } finally {
      await session.close();
    }
  },
};
