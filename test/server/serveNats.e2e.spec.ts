/**
 * `redflow serve --nats` end to end, with real processes throughout: a core/memory worker and a
 * model/tool worker (`redflow worker`), and `redflow serve --nats` itself (the built CLI: run
 * `npm run build` first), all on the shared nats-server under a prefix of this file's own. Then
 * the HTTP API over the wire (health, start, SSE with a dropped and resumed connection, list,
 * abort, 404s, a flow the workers do not run), and the editor in Chromium running the flow on
 * the cluster (screenshot: artifacts/screenshots/nats-run.png).
 *
 * The flow's tool takes 200 ms, and waits while a hold file `hold-<n>` exists in the test's
 * directory (n is the call's input): the workers are other processes, so this is the gate.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTerminal, type AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import type { HealthResponse, RunListResponse, RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { ROOT, removePrefix } from '../distributed/clusterSupport.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { STACK_FRAME } from '../support/cli.js';
import { call, openSse, waitForRun, type ServerPort, type SseFrame, type SseReader } from './serverHarness.js';

const BIN = path.join(ROOT, 'bin/redflow.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skipBrowser = process.env.REDFLOW_SKIP_BROWSER_TESTS === '1';
if (!skipBrowser && !existsSync(CHROMIUM)) {
  throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), set CHROMIUM_PATH, or set REDFLOW_SKIP_BROWSER_TESTS=1`);
}
const SCREENSHOT = path.join(ROOT, 'artifacts/screenshots/nats-run.png');

/** The flow the workers host, by its flows-directory id and by the `id` inside the file. */
const FLOW = 'serve-nats';
const FLOW_FILE_ID = 'serve-nats-e2e';
/** A flow of the same directory that the workers do not host. */
const OTHER = 'other';
const OTHER_FILE_ID = 'serve-nats-other';
const TOOL_MS = 200;

const prefix = uniquePrefix();
const children: ChildProcess[] = [];
let dir: string;
let flowsDir: string;
let nc: NatsConnection | undefined;
let serve: ChildProcess;
let serveStderr = () => '';
let server: ServerPort;
let url: string;

/** The tool, with the hold directory written in (the workers are other processes). */
function toolSource(holdDir: string): string {
  return `// The slow step of test/server/serveNats.e2e.spec.ts: ${TOOL_MS} ms, then waits while hold-<n> exists.
import { existsSync } from 'node:fs';
import path from 'node:path';
const HOLD_DIR = ${JSON.stringify(holdDir)};
export default {
  name: 'step',
  description: 'Takes one slow step',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
  async execute(input, { signal }) {
    const hold = path.join(HOLD_DIR, 'hold-' + (input.n ?? 0));
    await new Promise((resolve, reject) => {
      let timer;
      const tick = () => (existsSync(hold) ? (timer = setTimeout(tick, 20)) : resolve());
      timer = setTimeout(tick, ${TOOL_MS});
      signal?.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('interrupted')); }, { once: true });
    });
    return { step: input.n ?? 0 };
  },
};
`;
}

function flowFile(id: string) {
  return {
    id,
    name: 'Two slow steps',
    nodes: [
      { id: 'in', type: 'trigger.input', position: { x: 0, y: 150 } },
      { id: 'agent', type: 'agent.core', position: { x: 250, y: 150 }, config: { strategy: 'react', maxIterations: 5, allowedTools: ['step'] } },
      {
        id: 'model',
        type: 'model.llm',
        position: { x: 500, y: 0 },
        config: {
          provider: 'scripted',
          answers: [
            { action: 'tool', tool: 'step', input: { n: 1 }, confidence: 0.4 },
            { action: 'tool', tool: 'step', input: { n: 2 }, confidence: 0.6 },
            { action: 'final', message: 'two slow steps taken', confidence: 0.95 },
          ],
        },
      },
      { id: 'step', type: 'tool.module', position: { x: 500, y: 300 }, config: { module: 'tools/slowStep.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'step' },
    ],
  };
}

/** This process's environment without model, Redflow or NATS settings (the machine may set them). */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|REDFLOW_|NATS_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

/**
 * Starts `node bin/redflow.js <args>` (registered for cleanup at once) and resolves once its
 * output matches `ready`, with the match and a reader of its stderr so far.
 */
function startCli(args: readonly string[], ready: RegExp, timeoutMs = 15_000): Promise<{ child: ChildProcess; match: RegExpExecArray; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redflow ${args.join(' ')}: not ready within ${timeoutMs} ms:\n${stdout}\n${stderr}`)), timeoutMs);
    const check = () => {
      const match = ready.exec(`${stdout}\n${stderr}`);
      if (!match) return;
      clearTimeout(timer);
      resolve({ child, match, stderr: () => stderr });
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      check();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      check();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`redflow ${args.join(' ')} exited (${code ?? signal}) before it was ready:\n${stdout}\n${stderr}`));
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (or signal) once it has exited. */
async function stopProcess(child: ChildProcess, graceMs = 5000): Promise<number | NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(killer);
  }
}

const hold = (n: number) => writeFile(path.join(dir, `hold-${n}`), '');
const release = (n: number) => rm(path.join(dir, `hold-${n}`), { force: true });

async function startRun(input: unknown): Promise<string> {
  const started = await call(server, 'POST', '/api/runs', { body: { flow: FLOW, input } });
  expect(started.status, started.text).toBe(201);
  const body = started.json as RunStartedResponse;
  expect(body.flow).toBe(FLOW);
  expect(started.headers.location).toBe(`/api/runs/${body.traceId}`);
  return body.traceId;
}

async function storedEvents(traceId: string): Promise<AgentEvent[]> {
  const answer = await call(server, 'GET', `/api/runs/${traceId}/events`);
  expect(answer.status, answer.text).toBe(200);
  return (answer.json as { events: AgentEvent[] }).events;
}

/** Polls the stored log until `done` says so. */
async function untilStored(traceId: string, done: (events: AgentEvent[]) => boolean, timeoutMs = 10_000): Promise<AgentEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await storedEvents(traceId);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`run ${traceId}: the log did not get there: ${events.map((e) => e.type).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const agentEvents = (frames: readonly SseFrame[]): AgentEvent[] =>
  frames.filter((frame) => frame.event === 'agent-event').map((frame) => JSON.parse(frame.data ?? '') as AgentEvent);

/** Waits for the stream's `end` frame and the end of the answer; the run it carries. */
async function streamEnd(sse: SseReader): Promise<RunResponse> {
  const end = await sse.waitFor((frame) => frame.event === 'end', 15_000);
  await sse.ended;
  return JSON.parse(end.data ?? '') as RunResponse;
}

const toolRequested = (n: number) => (event: AgentEvent) => event.type === 'tool.requested' && (event.data as { input?: { n?: number } }).input?.n === n;

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist/cli/serveCommand.js'))) throw new Error('dist/ is not built: run `npm run build` first');
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-serve-nats-'));
  flowsDir = path.join(dir, 'flows');
  await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
  await writeFile(path.join(flowsDir, 'tools/slowStep.mjs'), toolSource(dir));
  await writeFile(path.join(flowsDir, `${FLOW}.json`), `${JSON.stringify(flowFile(FLOW_FILE_ID), null, 2)}\n`);
  await writeFile(path.join(flowsDir, `${OTHER}.json`), `${JSON.stringify(flowFile(OTHER_FILE_ID), null, 2)}\n`);
  nc = await connectTestServer('serve-nats-e2e');

  const flowPath = path.join(flowsDir, `${FLOW}.json`);
  const natsArgs = ['--nats', NATS_URL, '--prefix', prefix];
  const [, , started] = await Promise.all([
    startCli(['worker', flowPath, '--role', 'core,memory', ...natsArgs], /worker ready/),
    startCli(['worker', flowPath, '--role', 'model,tool', ...natsArgs], /worker ready/),
    startCli(['serve', ...natsArgs, '--port', '0', '--flows', flowsDir], /redflow serve: (http:\/\/127\.0\.0\.1:(\d+)\/)/),
  ]);
  serve = started.child;
  serveStderr = started.stderr;
  url = started.match[1] as string;
  server = { port: Number(started.match[2]) };
}, 30_000);

afterAll(async () => {
  await Promise.all(children.map((child) => stopProcess(child)));
  if (nc) {
    await removePrefix(nc, prefix);
    await nc.drain();
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('redflow serve --nats, with real worker processes', () => {
  it('should say in /api/health that runs run on NATS', async () => {
    const health = await call(server, 'GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ ok: true, mode: 'nats' } satisfies Partial<HealthResponse>);
  });

  it("should not warn ENV_NOT_SET at validate from its own environment: the workers' is the one runs see", async () => {
    // OpenAI's model without OPENAI_API_KEY here (childEnv leaves OPENAI_* out): an embedded server would warn.
    const flow = flowFile(FLOW);
    const onOpenAi = { ...flow, nodes: flow.nodes.map((n) => (n.id === 'model' ? { ...n, config: { provider: 'openai', model: 'gpt-4o-mini' } } : n)) };
    const checked = await call(server, 'POST', '/api/validate', { body: onOpenAi });
    expect(checked.status, checked.text).toBe(200);
    const validation = checked.json as { ok: boolean; warnings: { code: string }[] };
    expect(validation.ok).toBe(true);
    expect(validation.warnings.map((w) => w.code)).not.toContain('ENV_NOT_SET');
  });

  it('should start a run on the cluster and stream every event in order, then end', async () => {
    const traceId = await startRun('stream it');
    const sse = await openSse(server, `/api/runs/${traceId}/stream`);
    const end = await streamEnd(sse);
    const streamed = agentEvents(sse.frames);
    const stored = await storedEvents(traceId);
    expect(streamed).toEqual(stored);
    expect(streamed.map((event) => event.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(sse.frames.filter((frame) => frame.event === 'agent-event').map((frame) => frame.id)).toEqual(stored.map((event) => String(event.seq)));
    expect(streamed[0]?.type).toBe('run.started');
    expect(streamed.at(-1)?.type).toBe('run.completed');
    expect(end).toMatchObject({
      traceId,
      status: 'finished',
      flow: FLOW,
      iterations: 3,
      lastSeq: stored.length,
      outcome: { status: 'done', reason: 'final_answer', answer: 'two slow steps taken' },
    });
    // The end frame comes last, and has no id (a reconnect resumes after the last real event).
    expect(sse.frames.at(-1)).toMatchObject({ event: 'end' });
    expect(sse.frames.at(-1)?.id).toBeUndefined();

    // Listed, finished, under its flows-directory id (the log names the file's own id).
    const list = await call(server, 'GET', '/api/runs');
    expect(list.status).toBe(200);
    const listed = (list.json as RunListResponse).runs.find((run) => run.traceId === traceId);
    expect(listed).toMatchObject({ status: 'finished', flow: FLOW, iterations: 3, outcome: { status: 'done' } });
    const byFlow = await call(server, 'GET', `/api/runs?flow=${FLOW}`);
    expect((byFlow.json as RunListResponse).runs.map((run) => run.traceId)).toContain(traceId);
    const byOther = await call(server, 'GET', `/api/runs?flow=${OTHER}`);
    expect((byOther.json as RunListResponse).runs).toEqual([]);
  });

  it('should resume a dropped stream after Last-Event-ID mid-run: nothing lost, nothing repeated', async () => {
    await Promise.all([hold(1), hold(2)]);
    try {
      const traceId = await startRun('drop me');
      const first = await openSse(server, `/api/runs/${traceId}/stream`);
      await first.waitFor((frame) => frame.event === 'agent-event' && toolRequested(1)(JSON.parse(frame.data ?? '') as AgentEvent));
      first.destroy();
      await first.ended;
      const before = agentEvents(first.frames);
      const lastId = first.frames.filter((frame) => frame.id !== undefined).at(-1)?.id as string;
      expect(lastId).toBe(String(before.at(-1)?.seq));

      // While nobody listens the run goes on to its second call (held there: still running).
      await release(1);
      const meanwhile = await untilStored(traceId, (events) => events.some(toolRequested(2)));
      expect(meanwhile.length).toBeGreaterThan(before.length);
      expect((await call(server, 'GET', `/api/runs/${traceId}`)).json).toMatchObject({ status: 'running' });

      const second = await openSse(server, `/api/runs/${traceId}/stream`, { 'last-event-id': lastId });
      await second.waitFor((frame) => frame.event === 'agent-event' && toolRequested(2)(JSON.parse(frame.data ?? '') as AgentEvent));
      await release(2);
      const end = await streamEnd(second);
      const after = agentEvents(second.frames);
      expect(after[0]?.seq).toBe(Number(lastId) + 1);
      const stored = await storedEvents(traceId);
      expect([...before, ...after]).toEqual(stored);
      expect(end).toMatchObject({ status: 'finished', lastSeq: stored.length, outcome: { status: 'done' } });
    } finally {
      await Promise.all([release(1), release(2)]);
    }
  });

  it('should abort a running run (202, then outcome aborted), and refuse a second abort with 409', async () => {
    await hold(1);
    try {
      const traceId = await startRun('abort me');
      await untilStored(traceId, (events) => events.some(toolRequested(1)));
      const aborted = await call(server, 'POST', `/api/runs/${traceId}/abort`, { body: { reason: 'stopped by the e2e test' } });
      expect(aborted.status, aborted.text).toBe(202);
      expect(aborted.json).toMatchObject({ traceId, flow: FLOW });
      const run = await waitForRun(server, traceId, (r) => r.status === 'finished');
      expect(run.outcome).toMatchObject({ status: 'blocked', reason: 'aborted', error: { code: 'RUN_ABORTED' } });
      expect((await storedEvents(traceId)).at(-1)?.type).toBe('run.failed');

      const again = await call(server, 'POST', `/api/runs/${traceId}/abort`);
      expect(again.status).toBe(409);
      expect(again.error?.code).toBe('RUN_ALREADY_FINISHED');
      expect(again.error?.message).toContain('aborted');
      const list = await call(server, 'GET', '/api/runs?limit=1');
      expect((list.json as RunListResponse).runs[0]).toMatchObject({ traceId, status: 'finished', outcome: { reason: 'aborted' } });
    } finally {
      await release(1);
    }
  });

  it('should answer 404 RUN_NOT_FOUND for a trace id the cluster has never seen', async () => {
    const traceId = 'trace-never-started-0000';
    for (const [method, route] of [
      ['GET', `/api/runs/${traceId}`],
      ['GET', `/api/runs/${traceId}/events`],
      ['GET', `/api/runs/${traceId}/stream`],
      ['POST', `/api/runs/${traceId}/abort`],
    ] as const) {
      const answer = await call(server, method, route);
      expect(answer.status, `${method} ${route}`).toBe(404);
      expect(answer.error?.code).toBe('RUN_NOT_FOUND');
    }
  });

  it('should refuse a flow the workers do not run with FLOW_MISMATCH (a 4xx naming both flows)', async () => {
    const refused = await call(server, 'POST', '/api/runs', { body: { flow: OTHER, input: 'wrong flow' } });
    // The request is well formed and the flow valid; the cluster hosts another flow.
    expect(refused.status).toBe(409);
    expect(refused.error?.code).toBe('FLOW_MISMATCH');
    expect(refused.error?.message).toContain(FLOW_FILE_ID);
    expect(refused.error?.message).toContain(OTHER_FILE_ID);
    expect(refused.error?.hint).toBeTruthy();
  });

  it.skipIf(skipBrowser)('should run the flow on the cluster from the editor, in Chromium', async () => {
    const flowMtime = (await stat(path.join(flowsDir, `${FLOW}.json`))).mtimeMs;
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.goto(url);
      await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW}"]`, { state: 'attached', timeout: 10_000 });
      await page.selectOption('[data-testid="flow-select"]', FLOW);
      await expect.poll(() => page.locator('[data-testid="canvas"] .react-flow__node').count()).toBe(4);
      await page.fill('[data-testid="run-input"]', 'from the editor');
      await page.click('[data-testid="run-flow"]');
      await expect.poll(() => page.locator('[data-testid="timeline-row"]').count(), { timeout: 15_000 }).toBe(3);
      await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
      await expect.poll(() => page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('done');
      expect(await page.textContent('[data-testid="run-outcome"]')).toContain('done');
      expect(await page.textContent('[data-testid="run-answer"]')).toBe('two slow steps taken');
      const actions = await page.locator('[data-testid="timeline-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
      expect(actions).toEqual(['tool', 'tool', 'final']);
      await mkdir(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
    } finally {
      await browser?.close();
    }
    // Run as opened: the flow file the workers host was not rewritten.
    expect((await stat(path.join(flowsDir, `${FLOW}.json`))).mtimeMs).toBe(flowMtime);
    // And the run is the cluster's: listed as this flow's newest.
    const list = await call(server, 'GET', `/api/runs?flow=${FLOW}&limit=1`);
    expect((list.json as RunListResponse).runs[0]).toMatchObject({ status: 'finished', flow: FLOW, outcome: { answer: 'two slow steps taken' } });
  }, 30_000);

  it('should stop cleanly on SIGTERM with a stream open, and leave the run to the cluster', async () => {
    await hold(1);
    try {
      const traceId = await startRun('outlive the server');
      const sse = await openSse(server, `/api/runs/${traceId}/stream`);
      await sse.waitFor((frame) => frame.event === 'agent-event' && toolRequested(1)(JSON.parse(frame.data ?? '') as AgentEvent));
      const stoppedAt = Date.now();
      expect(await stopProcess(serve)).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(4000);
      await sse.ended;
      expect(sse.frames.some((frame) => frame.event === 'end')).toBe(false);
      const stderr = serveStderr();
      expect(stderr).not.toMatch(STACK_FRAME);
      expect(stderr).toContain(`runs on the NATS cluster at ${NATS_URL}`);
      expect(stderr).toContain('SIGTERM: stopping (runs under way go on on the cluster)');

      // The server only watched: the run is the cluster's, and ends there as it would have.
      await release(1);
      const store = await openJetStreamEventStore(nc as NatsConnection, { prefix });
      try {
        const deadline = Date.now() + 10_000;
        let events: readonly AgentEvent[] = [];
        while (!(events.at(-1) && isTerminal(events.at(-1) as AgentEvent))) {
          if (Date.now() > deadline) throw new Error(`run ${traceId} did not end on the cluster: ${events.map((e) => e.type).join(', ')}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
          events = (await store.read(traceId)).events;
        }
        expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { status: 'done', answer: 'two slow steps taken' } } });
      } finally {
        await store.close();
      }
    } finally {
      await release(1);
    }
  });
});
