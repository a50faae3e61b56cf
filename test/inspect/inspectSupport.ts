// Helpers for the Stately inspector tests: a real WebSocket receiver standing in for the
// inspector (or its relay), which records every message it is sent, parsed.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { expect } from 'vitest';
import { isTerminal, type AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { reactMachineDefinition } from '../../src/inspect/index.js';
import { forkOfRun } from '../../src/inspect/replayMessages.js';
import { ReactState, stateValueOf } from '../../src/machines/reactState.js';
import { CLI, REPO_ROOT } from '../support/cli.js';

/** The flow the inspector tests run: order-status, with its scripted model. */
export const ORDER_STATUS_FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');

/** The order-status run's states as the inspector sees them: every microstep, transient ones too. */
export const ORDER_STATUS_STATES = [
  ReactState.AwaitingModel,
  ...[ReactState.Validating, ReactState.AwaitingTool, ReactState.CheckingStop, ReactState.AwaitingModel],
  ...[ReactState.Validating, ReactState.AwaitingTool, ReactState.CheckingStop, ReactState.AwaitingModel],
  ReactState.Validating,
  // The final answer ends the run through concluding, which records the ending.
  ReactState.Concluding,
  ReactState.Done,
  // As the snapshots hold them: concluding inside its parent state, { ending: 'concluding' }.
].map(stateValueOf);

/** Checks the messages are exactly the replay of `events`: actor, then event + snapshot per event, in order. */
export function expectReplayOf(messages: readonly WireMessage[], events: readonly AgentEvent[]): void {
  const traceId = events[0]!.traceId;
  expect(messages).toHaveLength(1 + 2 * events.length);
  const [actor, ...rest] = messages;
  expect(actor?.type).toBe('@xstate.actor');
  expect(actor?.sessionId).toBe(traceId);
  expect(actor?.name).toBe('react');
  expect(actor?.definition).toBe(reactMachineDefinition());
  expect(actor?.snapshot?.value).toBe(ReactState.Starting);
  expect(actor?.createdAt).toBe(String(Date.parse(events[0]!.time)));
  const steps = runSteps(events);
  // A fork's snapshots name its parent and fork point from its run.forked (seq 2) on.
  const forkOf = forkOfRun(events);
  steps.forEach((step, index) => {
    const sent = rest[2 * index];
    const snapshot = rest[2 * index + 1];
    expect(sent?.type).toBe('@xstate.event');
    expect(sent?.sessionId).toBe(traceId);
    // The log event itself is the inspector's event, with its own time.
    expect(sent?.event).toEqual(JSON.parse(JSON.stringify(step.event)));
    expect(sent?.createdAt).toBe(String(Date.parse(step.event.time)));
    expect(snapshot?.type).toBe('@xstate.snapshot');
    expect(snapshot?.event?.seq).toBe(step.event.seq);
    expect(snapshot?.snapshot?.value).toEqual(stateValueOf(step.state));
    expect(snapshot?.snapshot?.context).toEqual({ ...(index >= 1 && forkOf !== undefined && { forkOf }), envelope: JSON.parse(JSON.stringify(step.envelope)) });
    expect(snapshot?.snapshot?.status).toBe(isTerminal(step.event) ? 'done' : 'active');
  });
  const last = events.at(-1)!;
  if (isTerminal(last)) expect(rest.at(-1)?.snapshot?.output).toEqual(fold(events).observability.outcome);
}

/** A Stately inspection message as it arrives on the wire. */
export interface WireMessage {
  readonly type: '@xstate.actor' | '@xstate.event' | '@xstate.snapshot';
  readonly sessionId: string;
  readonly rootId?: string;
  readonly parentId?: string;
  readonly sourceId?: string;
  readonly name?: string;
  readonly definition?: string;
  readonly createdAt: string;
  readonly _version: string;
  readonly event?: { readonly type: string; readonly [key: string]: unknown };
  readonly snapshot?: { readonly status?: string; readonly value?: unknown; readonly context?: Record<string, unknown>; readonly output?: unknown };
}

/** A receiver: what the inspector relay is to redflow, in-process and on a free port. */
export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly messages: WireMessage[];
  /** Resolves once `predicate` holds for the messages received (checked on each message). */
  waitFor(predicate: (messages: readonly WireMessage[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Called with each new connection, e.g. to drop it. */
  onConnection?: (socket: WebSocket) => void;
  close(): Promise<void>;
}

/** Starts a WebSocket server on 127.0.0.1 and a free port that records the JSON messages it gets. */
export async function startReceiver(): Promise<Receiver> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const port = (wss.address() as AddressInfo).port;
  const messages: WireMessage[] = [];
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url: `ws://127.0.0.1:${port}`,
    port,
    messages,
    waitFor(predicate, timeoutMs = 10_000) {
      if (predicate(messages)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(messages)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver did not get the expected messages within ${timeoutMs} ms (it has ${messages.length})`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      messages.push(JSON.parse(data.toString()) as WireMessage);
      for (const check of [...waiters]) check();
    });
    receiver.onConnection?.(socket);
  });
  return receiver;
}

/** Connects to a relay as its browser page would (with the page's Origin) and records what it relays. */
export async function connectAsPage(pageUrl: string): Promise<{ messages: WireMessage[]; socket: WebSocket; close(): void }> {
  const socket = new WebSocket(pageUrl.replace(/^http/, 'ws'), { origin: pageUrl });
  const messages: WireMessage[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as WireMessage));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { messages, socket, close: () => socket.close() };
}

/** Waits until `check` is true, polling. */
export async function eventually(check: () => boolean, timeoutMs = 10_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The root actor's snapshot values, in order, for one session. */
export function statesOf(messages: readonly WireMessage[], sessionId: string): unknown[] {
  return messages.filter((m) => m.type === '@xstate.snapshot' && m.sessionId === sessionId).map((m) => m.snapshot?.value);
}

/** The environment for CLI processes: embedded mode whatever NATS_URL the test runner has. */
export const EMBEDDED_ENV = { NATS_URL: '' } as const;

/** A temporary directory, removed by the returned function. */
export async function tempDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-inspect-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Starts `redflow <args>` and keeps it running (for commands that serve until Ctrl-C). */
export function startCli(args: readonly string[], cwd: string): { child: ChildProcessWithoutNullStreams; stdout(): string; stderr(): string; exited: Promise<number | null> } {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...EMBEDDED_ENV };
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}
