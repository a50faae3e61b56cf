import type { AgentEvent } from '../events/eventTypes.js';
import { isValidTraceId } from '../runtime/ids.js';
import { Subject } from '../actors/subjects.js';
import { openTraceToRead } from '../nats/cluster/openTraceToRead.js';
import { parseTraceEvents } from '../nats/cluster/traceEvent.js';
import { liveDuplicateFilter } from '../nats/cluster/liveDuplicates.js';
import { crashHook, help, parse, usageError } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exitCodes.js';
import { connectFromOptions, natsOptionSpecs, natsOptionsHelp, replicationOptions, subjectPrefix } from './natsOptions.js';
import { line, styles, type Output } from './output.js';
import { STOP_DEADLINE_MS, exitAfterGrace, stopWithin } from './stopWithin.js';
import { allowFilesOptionHelp, allowFilesOptionSpec, allowedFolders } from './allowFilesOption.js';
import { formatTokens } from './timeline.js';

const roles = ['core', 'model', 'tool', 'memory'] as const;
type Role = (typeof roles)[number];

const workerUsage = `usage: redflow worker <flow.json> --nats <url> [--role core|model|tool|memory ...] [--lease <ms>]
                      [--attempt-timeout <ms>] [--no-micro-services] [--allow-files <dir> ...]

Hosts a flow on a NATS cluster until stopped (Ctrl-C or SIGTERM). Roles (default: all):
  core     runs the REACT statechart for runs started with \`redflow run --nats\`; owns each run
           with a lease, and takes over the runs of core workers that die
  model    serves the flow's model
  tool     serves the flow's tools (a repeated idempotency key is answered from storage)
  memory   serves memory.kv from the NATS KV bucket <prefix>-memory
Start as many workers of a role as you want capacity: they share the work (queue groups).
A flow with subagents (agent.ref) is hosted with them: each subagent's flow, down the tree, on the
prefix <prefix>.agent-<its name>, in the same roles.
  --role <role>     repeat, or give a comma-separated list
  --lease <ms>      how long the runs of a dead core worker, or the tool calls of a dead tool
                    worker, wait before another worker takes them (default 3000 for runs,
                    10000 for tool calls)
  --attempt-timeout <ms>
                    core: how long one model or tool call may go unanswered before it is sent
                    again (same idempotency key); the longest a call whose worker died holds
                    its run (default 30000). Keep it above the longest model call: a model call
                    sent again is made again
  --no-micro-services
                    serve the same subjects plainly, not as NATS micro services (redflow-core,
                    redflow-model, redflow-tool, redflow-memory: what \`nats micro ls\` finds)
${allowFilesOptionHelp}

${natsOptionsHelp}`;

/** `redflow worker`: hosts roles of a flow on NATS until stopped. */
export const worker: Command = {
  name: 'worker',
  usage: workerUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      { role: { type: 'string', multiple: true }, lease: { type: 'string' }, 'attempt-timeout': { type: 'string' }, 'no-micro-services': { type: 'boolean' }, ...allowFilesOptionSpec, ...natsOptionSpecs },
      workerUsage,
    );
    if (values.help) return help(output, workerUsage);
    const [flowPath, ...extra] = positionals;
    if (!flowPath) throw usageError('which flow? give the flow file to host', workerUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, workerUsage);
    const given = ((values.role as unknown as string[] | undefined) ?? []).flatMap((role) => role.split(',')).map((role) => role.trim());
    const unknown = given.find((role) => !(roles as readonly string[]).includes(role));
    if (unknown !== undefined) throw usageError(`unknown role "${unknown}"; roles are ${roles.join(', ')}`, workerUsage);
    const chosen = new Set<Role>(given.length > 0 ? (given as Role[]) : roles);
    const leaseMs = values.lease === undefined ? undefined : Number(values.lease);
    if (leaseMs !== undefined && (!Number.isInteger(leaseMs) || leaseMs < 500)) throw usageError('--lease must be a whole number of milliseconds, at least 500', workerUsage);
    const attemptText = values['attempt-timeout'] as string | undefined;
    const attemptTimeoutMs = attemptText === undefined ? undefined : Number(attemptText);
    if (attemptTimeoutMs !== undefined && (!Number.isInteger(attemptTimeoutMs) || attemptTimeoutMs < 100)) {
      throw usageError('--attempt-timeout must be a whole number of milliseconds, at least 100', workerUsage);
    }
    const microServices = values['no-micro-services'] !== true;
    const prefix = subjectPrefix(values);
    const allowFiles = allowedFolders(values);
    const replication = replicationOptions(values);
    const nc = await connectFromOptions(values, `redflow-worker-${[...chosen].join('-')}`);
    const log = (text: string) => line(output.err, `${new Date().toISOString()} ${text}`);
    const closers: (() => Promise<void>)[] = [];
    try {
      // The flow, and its subagents' flows down the tree, each on its own prefix.
      const { flowsToHost } = await import('../nats/cluster/subagentFlows.js');
      for (const hosted of await flowsToHost(flowPath, prefix, allowFiles)) {
        if (hosted.subagent !== undefined) log(`subagent ${hosted.subagent} on prefix ${hosted.prefix}`);
        const actorRoles = [...chosen].filter((role): role is Exclude<Role, 'core'> => role !== 'core');
        if (actorRoles.length > 0) {
          const { startActorWorker } = await import('../nats/cluster/actorWorker.js');
          // Only tools keep their results in the tool-results bucket: the other roles' users may not
          // open it (deploy/nats/redflow.conf).
          const serveTool = actorRoles.includes('tool') ? await (await import('../nats/cluster/idempotentTools.js')).idempotentToolServer(nc, hosted.prefix, { log, ...(leaseMs !== undefined && { leaseMs }), ...(replication && { replication }) }) : undefined;
          const actors = await startActorWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, roles: actorRoles, log, allowFiles: hosted.allowFiles, microServices, ...(serveTool && { serveTool }), ...(replication && { replication }) });
          closers.push(() => actors.close());
        }
        if (chosen.has('core')) {
          const { startCoreWorker } = await import('../nats/cluster/coreWorker.js');
          const crash = crashHook();
          const core = await startCoreWorker({
            nc,
            flowPath: hosted.flowPath,
            prefix: hosted.prefix,
            log,
            allowFiles: hosted.allowFiles,
            microServices,
            ...(replication && { replication }),
            ...(leaseMs !== undefined && { leaseMs }),
            ...(attemptTimeoutMs !== undefined && { attemptTimeoutMs }),
            ...(crash && { onEvent: crash }),
          });
          closers.push(() => core.close());
        }
      }
    } catch (error) {
      await stopWithin(closers.reverse(), nc);
      throw error;
    }
    // Listening before saying it is ready: a stop asked for right after is a clean stop too.
    const stopAsked = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    log(`worker ready (${[...chosen].join(', ')}) on prefix ${prefix}; Ctrl-C stops it`);
    await stopAsked;
    log('stopping: runs in progress are left to the other core workers');
    if (!(await stopWithin(closers.reverse(), nc, STOP_DEADLINE_MS))) {
      log(`stopped without draining: NATS did not answer within ${STOP_DEADLINE_MS} ms`);
    }
    exitAfterGrace(ExitCode.Ok);
    return ExitCode.Ok;
  },
};

const tailUsage = `usage: redflow tail [traceId] --nats <url> [--after <seq>] [--json]

Without a trace id, prints the events of every run as they are stored, until Ctrl-C. With one,
prints that run's events from its first (a run not started yet is waited for), then each one as
it is stored, and ends with the run (or at Ctrl-C).
  --after <seq>  with a trace id: only the events after this seq
  --json         one event per line, as JSON

${natsOptionsHelp}`;

/** `redflow tail`: every run's events, live, or one run's, followed to its end. */
export const tail: Command = {
  name: 'tail',
  usage: tailUsage,
  async run(args, output) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, after: { type: 'string' }, ...natsOptionSpecs }, tailUsage);
    if (values.help) return help(output, tailUsage);
    const [traceId, ...extra] = positionals;
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, tailUsage);
    if (traceId !== undefined && !isValidTraceId(traceId)) throw usageError(`"${traceId}" is not a trace id`, tailUsage);
    const after = afterOf(values.after, traceId);
    const prefix = subjectPrefix(values);
    const nc = await connectFromOptions(values, 'redflow-tail');
    const print = (event: AgentEvent) => line(output.out, values.json ? JSON.stringify(event) : formatEvent(event, output));
    const stopping = new AbortController();
    const stop = () => stopping.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      if (traceId !== undefined) {
        // One run: the trace stream's follow, from its first stored event to its ending.
        const store = await openTraceToRead(nc, prefix);
        line(output.err, styles(output.color).dim(`following run ${traceId} on ${prefix}; Ctrl-C stops`));
        try {
          for await (const event of store.follow(traceId, after, { signal: stopping.signal })) print(event);
        } finally {
          await store.close();
        }
        return ExitCode.Ok;
      }
      // Every run: what is stored from now on, live (no run to follow to an end).
      const subject = Subject.allTraces(prefix);
      // Each event is published live once, after it is stored; a repeat (another publisher) is dropped.
      const fresh = liveDuplicateFilter();
      const subscription = nc.subscribe(subject, {
        callback: (error, message) => {
          if (error) return;
          const events = parseTraceEvents(message.data);
          if (!events) {
            line(output.err, `(not an event on ${message.subject})`);
            return;
          }
          for (const event of fresh(events)) print(event);
        },
      });
      await nc.flush();
      line(output.err, styles(output.color).dim(`following ${subject}; Ctrl-C stops`));
      await new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
      subscription.unsubscribe();
      return ExitCode.Ok;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await stopWithin([], nc);
    }
  },
};

/** `--after`: a whole number ≥ 0, for one run only. */
function afterOf(value: string | boolean | undefined, traceId: string | undefined): number {
  if (value === undefined) return 0;
  if (traceId === undefined) throw usageError('--after needs a trace id: it counts the events of one run', tailUsage);
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw usageError(`--after must be a whole number ≥ 0, not "${String(value)}"`, tailUsage);
  return n;
}

/**
 * One event as a line: time, run, seq, type, and what matters of its data (a model call's tokens
 * when reported, a failed tool call marked `✖ CODE` as in the timeline).
 */
export function formatEvent(event: AgentEvent, output: Pick<Output, 'color'>): string {
  const s = styles(output.color);
  const head = `${event.time} ${event.traceId} #${event.seq} ${s.bold(event.type)}`;
  switch (event.type) {
    case 'run.started':
      return `${head} input=${JSON.stringify(event.data.input).slice(0, 80)}`;
    case 'model.answered':
      return `${head} ${event.data.durationMs} ms${event.data.usage ? `  ${formatTokens(event.data.usage)}` : ''}`;
    case 'tool.requested':
      return `${head} ${event.data.tool} conf ${event.data.confidence}`;
    case 'tool.completed':
      return `${head} ${event.data.tool} ${event.data.ok ? s.green('ok') : s.red(`✖ ${event.data.error?.code ?? 'failed'}`)} ${event.data.durationMs} ms`;
    case 'run.completed':
    case 'run.failed':
      return `${head} ${event.data.outcome.status} (${event.data.outcome.reason})${event.data.outcome.error ? ` ${event.data.outcome.error.code}` : ''}`;
    default:
      return `${head} iteration ${event.iteration}`;
  }
}
