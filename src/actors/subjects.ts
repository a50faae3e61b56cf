import { ErrorCode, RedflowError, errorInfo } from '../errors.js';

/** The subject prefix when none is configured; set another one per tenant. */
export const DEFAULT_SUBJECT_PREFIX = 'redflow';

/**
 * What a subject prefix may be: tokens of lowercase letters, digits and `-`, separated by dots.
 * Stream and bucket names cannot hold dots, and the stream's is upper-cased (see {@link Storage});
 * without `_` and capitals, turning dots into `_` and upper-casing keeps two prefixes apart
 * (`acme.prod` and `acme_prod`, or `Acme` and `acme`, would otherwise share one stream).
 */
const SUBJECT_PREFIX = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/**
 * The tokens Redflow puts right after a prefix. None may be a later token of a prefix: `acme.trace`
 * would have its run starts (`acme.trace.runs.start`) land in tenant `acme`'s trace stream
 * (`acme.trace.>`), and `redflow.tool` would serve under the default prefix's tools.
 */
const RESERVED_TOKENS: ReadonlySet<string> = new Set(['model', 'tool', 'memory', 'trace', 'log', 'runs']);

/** True when `prefix` can be a subject prefix, with a stream, buckets and subjects of its own. */
export function isSubjectPrefix(prefix: string): boolean {
  return SUBJECT_PREFIX.test(prefix) && !prefix.split('.').slice(1).some((token) => RESERVED_TOKENS.has(token));
}

/** What to tell someone whose prefix is refused. */
export const SUBJECT_PREFIX_HINT =
  'use lowercase letters, digits and -, in tokens separated by dots (acme.prod): "_" and capitals are refused, since ' +
  'the stream and bucket names turn dots into "_" and upper-case the stream name, so acme_prod or Acme.prod would share acme.prod\'s; ' +
  'and no token after the first may be model, tool, memory, trace, log or runs (acme.trace would share acme\'s subjects)';

/**
 * Refuses a prefix that is not {@link isSubjectPrefix}.
 *
 * @throws RedflowError `SUBJECT_PREFIX_INVALID`
 */
export function checkSubjectPrefix(prefix: string): void {
  if (!isSubjectPrefix(prefix)) {
    throw new RedflowError(errorInfo(ErrorCode.SUBJECT_PREFIX_INVALID, `"${prefix}" is not a valid subject prefix`, { hint: SUBJECT_PREFIX_HINT }));
  }
}

/**
 * Every subject Redflow uses, built from a prefix so tenants can be kept apart. Tokens are
 * `.`-separated; names given by users (tool names, node ids) must be single tokens
 * (see {@link isSubjectToken}).
 *
 * @example
 * ```ts
 * Subject.tool('redflow', 'lookup_order') // 'redflow.tool.lookup_order'
 * ```
 */
export const Subject = {
  model: (prefix: string, modelId: string) => `${prefix}.model.${modelId}`,
  tool: (prefix: string, toolName: string) => `${prefix}.tool.${toolName}`,
  memoryLoad: (prefix: string, memoryId: string) => `${prefix}.memory.${memoryId}.load`,
  memoryAppend: (prefix: string, memoryId: string) => `${prefix}.memory.${memoryId}.append`,
  /** One event of a run, live: a core NATS message per event, published once the log has stored it. */
  trace: (prefix: string, traceId: string, eventType: string) => `${prefix}.trace.${traceId}.${eventType}`,
  /** Every event of one run, live. */
  runTrace: (prefix: string, traceId: string) => `${prefix}.trace.${traceId}.>`,
  allTraces: (prefix: string) => `${prefix}.trace.>`,
  /**
   * A message of a run's stored log (the trace stream's subjects), named by the type of its last
   * event. Apart from the live trace subjects, so each event can be published there on its own.
   */
  log: (prefix: string, traceId: string, eventType: string) => `${prefix}.log.${traceId}.${eventType}`,
  /** Every stored message of one run (a JetStream filter subject). */
  runLog: (prefix: string, traceId: string) => `${prefix}.log.${traceId}.>`,
  /** What the trace stream captures. */
  allLogs: (prefix: string) => `${prefix}.log.>`,
  /** Where clients ask the core workers (a queue group) to start a run. */
  runStart: (prefix: string) => `${prefix}.runs.start`,
  /**
   * Where clients ask for a run to be aborted. Every core worker listens on all of them (no queue
   * group, see {@link Subject.runAborts}); only the worker that owns the run answers.
   */
  runAbort: (prefix: string, traceId: string) => `${prefix}.runs.abort.${traceId}`,
  /** Every run's abort subject: what each core worker subscribes to. */
  runAborts: (prefix: string) => `${prefix}.runs.abort.*`,
  /**
   * Where clients answer a run that waits (an approval, a client tool's result): the core workers
   * serve it in one queue group, and the one that takes the answer resumes the run.
   */
  runAnswer: (prefix: string, traceId: string) => `${prefix}.runs.answer.${traceId}`,
  /** Every run's answer subject: what the core workers serve. */
  runAnswers: (prefix: string) => `${prefix}.runs.answer.*`,
  /**
   * Where a model actor publishes the pieces of a run's answers as they stream, for a live view
   * (`serveModel`'s `chunkPrefix`). Outside the trace subjects on purpose: the trace stream
   * captures `<prefix>.trace.>`, and the log records each answer once, whole, not its pieces.
   */
  runChunk: (prefix: string, traceId: string) => `${prefix}.runs.chunk.${traceId}`,
  /**
   * Where a requester that gives up tells a service's members to stop the call (every member
   * listens, no queue group): `<service subject>.cancel`, e.g. `redflow.tool.lookup_order.cancel`.
   */
  cancel: (serviceSubject: string) => `${serviceSubject}.cancel`,
} as const;

/**
 * JetStream names derived from a prefix, defined once: the event log stream and the KV buckets.
 * Stream and bucket names cannot hold dots, so a prefix's dots become `_`; since a prefix holds no
 * `_` and no capitals ({@link isSubjectPrefix}), each prefix has names of its own. Every name
 * refuses an invalid prefix (`SUBJECT_PREFIX_INVALID`).
 *
 * @example
 * ```ts
 * Storage.traceStream('redflow') // 'REDFLOW_TRACE'
 * ```
 */
export const Storage = {
  traceStream: (prefix: string) => `${storageStem(prefix).toUpperCase()}_TRACE`,
  /** The runs under way on the cluster (kept until each ends). */
  runsBucket: (prefix: string) => `${storageStem(prefix)}-runs`,
  /** Run ownership leases of the core workers: entries expire unless their owner renews them. */
  leasesBucket: (prefix: string) => `${storageStem(prefix)}-leases`,
  /** Completed tool results by idempotency key. */
  toolResultsBucket: (prefix: string) => `${storageStem(prefix)}-tool-results`,
  /** Conversation memories (memory.kv on NATS). */
  memoryBucket: (prefix: string) => `${storageStem(prefix)}-memory`,
} as const;

function storageStem(prefix: string): string {
  checkSubjectPrefix(prefix);
  return prefix.replace(/\./g, '_');
}

/** True when `name` can be one subject token (no dots, spaces, wildcards). */
export function isSubjectToken(name: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(name);
}
