import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, STACK_FRAME, readVerifiedLog, runCli, type CliResult } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeBehaviour, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// Invariant 6 of docs/architecture.md: bad input never crashes a process and never loses a logged
// event. Each case runs the real command on the openai-agent example against a real HTTP server that
// answers badly, then checks the exit, stderr, the JSONL log line by line, and `redflow replay --json`.

const FLOW = path.join(REPO_ROOT, 'examples', 'openai-agent', 'flow.json');
const API_KEY = 'sk-test-secret';

/** A tool call that would be valid, with `a` replaced by `literal`. */
const withA = (literal: string) =>
  `{"action":"tool","tool":"calculator","input":{"operation":"multiply","a":${literal},"b":8},"confidence":0.8}`;

/** A Chat Completions stream whose content has bytes that are not UTF-8. */
const INVALID_UTF8_BODY = Buffer.concat([
  Buffer.from('data: {"id":"chatcmpl-x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"'),
  Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xa0]),
  Buffer.from('"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'),
]);

/** A stream whose whole content comes in one event (one line), as a real server could send it, for the raw (chunked) case. */
function oneEventStream(content: string): string {
  const chunk = { id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [{ index: 0, delta: { content }, finish_reason: 'stop' }] };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}

const TEN_MB_CONTENT = `{"action":"final","message":"${'x'.repeat(10 * 1024 * 1024)}","confidence":0.9}`;
const TWO_MB_CONTENT = `{"action":"final","message":"${'y'.repeat(2 * 1024 * 1024)}","confidence":0.9}`;

/** Where the run fails: in the model actor (no answer logged) or in the core's validation. */
type Stage = 'model_error' | 'invalid_answer';

interface Case {
  readonly name: string;
  readonly code: string;
  readonly stage: Stage;
  /** What the server does with the one request the run makes. */
  readonly behaviour?: FakeBehaviour;
  /** Scripted answers instead of the server (`--script`). */
  readonly script?: readonly unknown[];
}

const cases: readonly Case[] = [
  {
    name: 'a 10 MB answer streamed in deltas is cut off at the model actor\'s 4 MiB cap',
    code: 'MODEL_RESPONSE_TOO_LARGE',
    stage: 'model_error',
    behaviour: { kind: 'completion', content: TEN_MB_CONTENT },
  },
  {
    name: 'a 10 MB answer in one stream event (one line) is cut off at the 4 MiB cap',
    code: 'MODEL_RESPONSE_TOO_LARGE',
    stage: 'model_error',
    behaviour: { kind: 'raw', body: oneEventStream(TEN_MB_CONTENT), chunked: true, contentType: 'text/event-stream' },
  },
  {
    name: 'a 2 MB answer from the server gets past the byte cap and is refused by the core',
    code: 'ANSWER_TOO_LARGE',
    stage: 'invalid_answer',
    behaviour: { kind: 'completion', content: TWO_MB_CONTENT },
  },
  {
    name: 'a 2 MB scripted answer (--script) is refused by the core',
    code: 'ANSWER_TOO_LARGE',
    stage: 'invalid_answer',
    script: [TWO_MB_CONTENT],
  },
  {
    name: '100,000 nested arrays',
    code: 'ANSWER_TOO_DEEP',
    stage: 'invalid_answer',
    behaviour: { kind: 'completion', content: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
  },
  {
    name: 'a "__proto__" key',
    code: 'ANSWER_FORBIDDEN_KEY',
    stage: 'invalid_answer',
    behaviour: {
      kind: 'completion',
      content: '{"action":"tool","tool":"calculator","input":{"__proto__":{"polluted":true},"operation":"add","a":1,"b":2},"confidence":0.8}',
    },
  },
  {
    name: 'a "constructor" key',
    code: 'ANSWER_FORBIDDEN_KEY',
    stage: 'invalid_answer',
    behaviour: { kind: 'completion', content: '{"action":"final","message":"ok","confidence":0.9,"constructor":{"prototype":{}}}' },
  },
  { name: 'a NaN literal', code: 'INVALID_JSON', stage: 'invalid_answer', behaviour: { kind: 'completion', content: withA('NaN') } },
  { name: 'an Infinity literal', code: 'INVALID_JSON', stage: 'invalid_answer', behaviour: { kind: 'completion', content: withA('Infinity') } },
  {
    name: 'duplicate keys',
    code: 'ANSWER_DUPLICATE_KEY',
    stage: 'invalid_answer',
    behaviour: { kind: 'completion', content: '{"action":"tool","action":"final","message":"done","confidence":0.9}' },
  },
  {
    name: 'a response body with invalid UTF-8 bytes',
    code: 'MODEL_PROTOCOL_ERROR',
    stage: 'model_error',
    behaviour: { kind: 'raw', body: INVALID_UTF8_BODY, contentType: 'text/event-stream' },
  },
];

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-bad-answers-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Exit 1 with the code on stderr, and nothing that looks like a crash. */
function expectCleanFailure(result: CliResult, code: string): void {
  expect(result.signal, result.stderr).toBeNull();
  expect(result.stderr).not.toMatch(STACK_FRAME);
  expect(result.stderr).not.toContain('internal error');
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toContain(code);
}

// Each case has its own server and working directory, so the cases run side by side.
describe.concurrent('bad input never crashes a process and never loses a logged event', () => {
  it.each(cases)('$name → $code', async ({ code, stage, behaviour, script }) => {
    const cwd = await mkdtemp(path.join(dir, 'case-'));
    let server: FakeChatServer | undefined;
    try {
      const args = ['run', FLOW, '--input', 'what is 12.5 * 8?', '--log', 'run.jsonl'];
      if (script) {
        await writeFile(path.join(cwd, 'answers.json'), JSON.stringify(script));
        args.push('--script', 'answers.json');
      }
      server = await startFakeChatCompletionsServer();
      // Whatever else is asked must not succeed by accident.
      server.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
      if (behaviour) server.enqueue(behaviour);
      const env = { OPENAI_BASE_URL: server.baseUrl, REDFLOW_MODEL: 'test-model', OPENAI_API_KEY: API_KEY };

      // 10 MB through a CLI process while four other cases run: killed only if it hangs.
      const result = await runCli(args, { cwd, env, timeoutMs: 100_000 });

      expectCleanFailure(result, code);
      expect(result.stderr).toContain(`blocked (${stage}) ${code}`);
      // None of these failures is worth a retry: exactly one request (none with --script).
      expect(server.requests).toHaveLength(script ? 0 : 1);

      // Every line of the log verifies, and the log ends with the failure.
      const logPath = path.join(cwd, 'run.jsonl');
      const { text, events } = await readVerifiedLog(logPath);
      const expectedTypes =
        stage === 'model_error'
          ? ['run.started', 'model.requested', 'run.failed']
          : ['run.started', 'model.requested', 'model.answered', 'run.failed'];
      expect(events.map((e) => e.type)).toEqual(expectedTypes);
      const failed = events.at(-1);
      expect(failed?.data.outcome).toMatchObject({ status: 'blocked', reason: stage, error: { code } });
      expect(new Set(events.map((e) => e.traceId)).size).toBe(1);
      expect(text).not.toContain(API_KEY);
      // A huge answer is logged cut, with its length, so the log stays small and replay agrees; any other is logged whole.
      const answered = events.find((e) => e.type === 'model.answered')?.data as { text: string; originalLength?: number } | undefined;
      expect(answered === undefined).toBe(stage === 'model_error');
      const cut = code === 'ANSWER_TOO_LARGE';
      expect(answered?.originalLength).toBe(cut ? TWO_MB_CONTENT.length : undefined);
      expect(answered?.text.length ?? 0).toBeLessThanOrEqual(cut ? 1024 : Number.POSITIVE_INFINITY);

      // The replay reads all of it back, without problems, to the same outcome.
      const replay = await runCli(['replay', logPath, '--json'], { cwd, timeoutMs: 60_000 });
      expect(replay.stderr).not.toMatch(STACK_FRAME);
      expect(replay.code, replay.stderr).toBe(0);
      const replayed = JSON.parse(replay.stdout) as { events: number; problems: unknown[]; outcome: unknown };
      expect(replayed.events).toBe(events.length);
      expect(replayed.problems).toEqual([]);
      expect(replayed.outcome).toEqual(failed?.data.outcome);
    } finally {
      await server?.stop();
    }
    // Two CLI processes per case, five cases at once on a 2-core machine, the 10 MB ones among them:
    // the bound is for a hung process, not a speed claim.
  }, 120_000);
});
