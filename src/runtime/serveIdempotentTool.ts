import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { redactSecrets } from '../secrets/secrets.js';
import { checkToolRequest, liveUpdatesOf, runTool } from './serveActors.js';
import { isSubjectToken } from '../actors/subjects.js';
import type { ToolDefinition, ToolRequest, ToolResult } from '../actors/tool.js';
import type { HandlerContext, Subscription, Transport } from '../actors/transport.js';
import { completePatiently } from '../actors/toolResults/completePatiently.js';
import { checkLeaseMs, checkToolResultKey, toolResultKey, type ToolResultStore } from '../actors/toolResults/toolResultStore.js';

/** Options of {@link serveIdempotentTool}. */
export interface ServeIdempotentToolOptions {
  /**
   * This worker's name in the store (who holds a lease, who stored a result); each call appends a
   * nonce to it. Default `<hostname>:<pid>`.
   */
  readonly owner?: string;
  /**
   * How long a claim on a key lasts without renewal, in ms. A worker renews it every third of
   * this while the call runs, so it bounds how long a key stays stuck after its worker died (the
   * time until another worker takes the call over), not how long a call may take. Default 10 s.
   */
  readonly leaseMs?: number;
  /**
   * How long a request waits, in ms, while another worker executes the same key, before it is
   * answered `TOOL_CALL_IN_PROGRESS` (retryable). Default 60 s.
   */
  readonly busyWaitMs?: number;
  /** The queue group of the service (see `ServeOptions.queue`). Default: the subject. */
  readonly queue?: string;
  /** Receives one line per problem (a lost lease, a result that could not be stored). Default: standard error. */
  readonly log?: (line: string) => void;
  /**
   * Publish the calls' progress and attachments on `<livePrefix>.runs.chunk.<traceId>`, where the
   * run's core worker and followers hear them (as `serveTool`'s option of the same name).
   */
  readonly livePrefix?: string;
}

const DEFAULT_LEASE_MS = 10_000;
const DEFAULT_BUSY_WAIT_MS = 60_000;
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 250;
/** A failed renewal of a lease is tried again after this long. */
const RENEW_RETRY_MS = 200;

const defaultLog = (line: string): void => void process.stderr.write(`${redactSecrets(line)}\n`);

/**
 * Serves `tool` on `subject` like `serveTool`, but executes each idempotency key at most once
 * across every worker sharing `store` (a JetStream KV store in distributed mode). Results are kept
 * per tool, under `toolResultKey(tool.name, idempotencyKey)`, so tools sharing a store never answer
 * each other's calls:
 *
 * - a key with a **stored result** is answered with it; the tool does not run;
 * - a key **this worker is executing** (from its claim until its result is stored) is answered
 *   by that execution, whatever the store says meanwhile: after an outage of the store longer
 *   than the lease, the claim looks run out until the worker renews it (a failed renewal is
 *   tried again every 200 ms);
 * - a key **another worker is executing** (live lease) waits, polling with backoff, for that
 *   worker's result and answers it; when the lease runs out (the worker died) this worker takes
 *   the call over and executes it; after `busyWaitMs` it answers `TOOL_CALL_IN_PROGRESS`
 *   (retryable, nothing executed);
 * - otherwise this worker **claims** the key, executes the tool (renewing its lease every
 *   `leaseMs / 3`), stores the result — a failed call's `{ ok: false, error }` observation is a
 *   result like any other — and answers what the store holds (the first stored result for the key,
 *   so every requester of one key gets the same answer).
 *
 * Not stored: a call that fails *because it was interrupted* (its signal aborted: the transport is
 * closing, or the requester cancelled the call, e.g. its run was aborted). Its claim is released
 * and the request fails with `TRANSPORT_CLOSED` (retryable), so the retry runs the call instead of
 * replaying "interrupted". A store that cannot be reached before the call fails the request with
 * `TOOL_RESULT_STORE_FAILED` (retryable; nothing ran); one that cannot be reached after it is
 * tried again for 30 s (a NATS restart), the lease kept meanwhile, then the result is answered
 * unstored (logged), so a requester that logs it never asks again. A request without a valid idempotency key fails with
 * `TRANSPORT_BAD_MESSAGE`.
 *
 * **What "once" means.** A worker that dies *after* the tool's external effect but *before* the
 * result is stored leaves only its lease behind; once that runs out the call is executed again
 * with the same `idempotencyKey`. The store cannot close that window: a tool with external effects
 * must make them idempotent by `context.idempotencyKey` (an idempotency key on the API it calls, a
 * unique constraint, "insert if absent"). Likewise a worker that is alive but stalled past its
 * lease (a paused process) can be taken over while it still runs. And two workers taking one key
 * over in the same instant can both win on nats-server before 2.11 in a cluster (it does not hold a
 * second revision-checked write while one is in flight); one worker never makes two claims of a key
 * at once. Log lines name the tool and the
 * key, never inputs or results.
 *
 * @example
 * ```ts
 * const nc = await connectNats({ servers: '127.0.0.1:4222' });
 * const store = await createNatsKvToolResultStore(nc, { bucket: Storage.toolResultsBucket('redflow') });
 * const service = serveIdempotentTool(createNatsTransport(nc), Subject.tool('redflow', 'send_mail'), sendMail, store, {
 *   leaseMs: 5_000,
 * });
 * // …
 * service.unsubscribe();
 * ```
 */
export function serveIdempotentTool(
  transport: Transport,
  subject: string,
  tool: ToolDefinition,
  store: ToolResultStore,
  options: ServeIdempotentToolOptions = {},
): Subscription {
  const owner = options.owner ?? `${hostname()}:${process.pid}`;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  checkLeaseMs(leaseMs);
  const busyWaitMs = options.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS;
  if (!Number.isInteger(busyWaitMs) || busyWaitMs < 0) {
    throw new RedflowError(errorInfo(ErrorCode.TOOL_CONFIG_INVALID, `busyWaitMs must be a non-negative integer, got ${String(busyWaitMs)}`));
  }
  if (!isSubjectToken(tool.name)) {
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_CONFIG_INVALID, `cannot keep the results of tool ${JSON.stringify(tool.name)}: its name is not one subject token`, {
        hint: "a tool's name is letters, digits, '_' and '-'",
      }),
    );
  }
  const log = options.log ?? defaultLog;
  /** The keys this worker is executing, from its claim until the result is stored (or given up). */
  const executing = new Map<string, Promise<ToolResult>>();
  const say = (key: string, what: string) => log(`redflow tool ${tool.name}: ${key}: ${what}`);
  // One claim of a key at a time on this worker. Two requests for one key waiting on another
  // worker's lease would otherwise both try to take it over when it runs out, each writing at the
  // revision it read, and nats-server 2.9 in a cluster was seen to accept both such writes (a
  // revision check is not enforced between two proposals in flight): the call ran twice.
  const claims = new Map<string, Promise<unknown>>();
  const claimAlone = async <T>(key: string, claim: () => Promise<T>): Promise<T> => {
    const before = claims.get(key);
    const turn = (before ?? Promise.resolve()).then(claim, claim);
    const settled = turn.then(
      () => undefined,
      () => undefined,
    );
    claims.set(key, settled);
    try {
      return await turn;
    } finally {
      if (claims.get(key) === settled) claims.delete(key);
    }
  };

  const handle = async (request: ToolRequest, context: HandlerContext): Promise<ToolResult> => {
    // Keyed per tool: another tool's result for the same idempotency key is never answered here.
    const key = toolResultKey(tool.name, requestKey(request, subject));
    checkToolRequest(tool, request, subject);
    // One owner per attempt: two requests for one key on this worker must not both execute it.
    const attempt = `${owner}#${randomBytes(4).toString('hex')}`;
    const deadline = Date.now() + busyWaitMs;
    let poll = FIRST_POLL_MS;
    for (;;) {
      // This worker is executing the key already (or storing its result): that execution answers.
      // The store cannot tell: after an outage of the store longer than the lease, the claim looks
      // run out by the server's clock, and a repeat would claim the key and execute it again.
      const local = executing.get(key);
      if (local !== undefined) {
        const answer = await settledOrAborted(local, context.signal);
        if (answer.kind === 'aborted') throw interrupted(key, 'while waiting for this worker\'s execution');
        if (answer.kind === 'value') return answer.value;
        continue; // That execution was interrupted and released its claim: claim the key again.
      }
      const claim = await claimAlone(key, async () => {
        // Another request for the key may have claimed it while this one waited its turn.
        if (executing.has(key)) return undefined;
        const claimed = await store.claim(key, attempt, leaseMs);
        if (claimed.kind === 'claimed') executing.set(key, execute(request, key, attempt, context));
        return claimed;
      });
      if (claim === undefined) continue;
      if (claim.kind === 'stored') return claim.result;
      if (claim.kind === 'claimed') {
        const execution = executing.get(key) as Promise<ToolResult>;
        try {
          return await execution;
        } finally {
          if (executing.get(key) === execution) executing.delete(key);
        }
      }
      const now = Date.now();
      if (now >= deadline) {
        throw new RedflowError(
          errorInfo(ErrorCode.TOOL_CALL_IN_PROGRESS, `tool ${tool.name}: the call ${key} is still being executed by another worker after ${busyWaitMs} ms`, {
            hint: 'ask again with the same idempotency key; it is answered with the stored result once that worker finishes',
            retryable: true,
          }),
        );
      }
      // Wake for the result (backoff) or at the end of the lease, whichever comes first.
      const wait = Math.max(1, Math.min(poll, claim.until - now + 1, deadline - now));
      try {
        await sleep(wait, undefined, { signal: context.signal });
      } catch {
        throw interrupted(key, 'while waiting for another worker');
      }
      poll = Math.min(poll * 2, MAX_POLL_MS);
    }
  };

  const execute = async (request: ToolRequest, key: string, attempt: string, { signal, headers }: HandlerContext): Promise<ToolResult> => {
    // The lease is kept until the result is stored, so nobody takes the call over meanwhile.
    const renewal = keepLease(store, key, attempt, leaseMs, (what) => say(key, what));
    try {
      const result = await runTool(tool, request, signal, headers, liveUpdatesOf(transport, options.livePrefix, request));
      if (!result.ok && signal.aborted) {
        // Interrupted, not finished: storing "interrupted" would replay it forever.
        renewal.stop();
        await store.release(key, attempt).catch((error: unknown) => say(key, `could not release the claim (it runs out by itself): ${messageOf(error)}`));
        throw interrupted(key, 'during the call');
      }
      return await completePatiently(store, key, attempt, result, (what) => say(key, what));
    } finally {
      renewal.stop();
    }
  };

  const interrupted = (key: string, when: string) =>
    new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_CLOSED, `tool ${tool.name}: the call ${key} was interrupted ${when}; no result was stored`, {
        hint: 'ask again with the same idempotency key',
        retryable: true,
      }),
    );

  return transport.serve<ToolRequest, ToolResult>(subject, handle, {
    cancellable: true,
    ...(options.queue !== undefined && { queue: options.queue }),
  });
}

/** The request's idempotency key, or `TRANSPORT_BAD_MESSAGE` when there is no valid one. */
function requestKey(request: unknown, subject: string): string {
  const key = typeof request === 'object' && request !== null ? (request as { idempotencyKey?: unknown }).idempotencyKey : undefined;
  try {
    checkToolResultKey(key);
    return key;
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `the request on ${subject} has no valid idempotency key: ${messageOf(error)}`, {
        hint: 'a tool request carries idempotencyKey = "<traceId>:<iteration>"',
      }),
    );
  }
}

/** Renews the lease every `leaseMs / 3` until stopped; reports once when the lease was lost. */
function keepLease(store: ToolResultStore, key: string, owner: string, leaseMs: number, report: (what: string) => void): { stop(): void } {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = () => {
    timer = setTimeout(renew, Math.max(1, Math.floor(leaseMs / 3)));
    timer.unref();
  };
  const renew = () => {
    store.renew(key, owner, leaseMs).then(
      (held) => {
        if (stopped) return;
        if (held) schedule();
        else report('lost the lease while executing (another worker took the call over); the first stored result is answered');
      },
      (error: unknown) => {
        if (stopped) return;
        report(`could not renew the lease: ${messageOf(error)}`);
        // Again as soon as the store is back, not a third of a lease later: an outage longer than
        // the lease leaves the claim looking run out to the other workers until it is renewed.
        timer = setTimeout(renew, Math.min(RENEW_RETRY_MS, Math.max(1, Math.floor(leaseMs / 3))));
        timer.unref();
      },
    );
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** How `promise` settles, or `aborted` as soon as `signal` aborts (the promise goes on). */
function settledOrAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<{ kind: 'value'; value: T } | { kind: 'failed' } | { kind: 'aborted' }> {
  if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
  return new Promise((resolve) => {
    const onAbort = () => resolve({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => resolve({ kind: 'value', value }),
      () => resolve({ kind: 'failed' }),
    ).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
