import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { judgeAnswer } from '../../src/evals/judge.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// A judge is a model call made through the model actors a run uses: the scripted model, or an
// OpenAI-compatible server (here a local one speaking the real wire protocol). Its call is logged.

const question = { caseName: 'order-1', input: 'Where is A-1001?', answer: 'It ships with FastShip.', recordedAnswer: 'Order A-1001 shipped with FastShip.' };
let dir: string;
let server: FakeChatServer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-judge-'));
  server = await startFakeChatCompletionsServer();
});
afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('a judge', () => {
  it('should grade with a scripted model and log its call', async () => {
    const logFile = path.join(dir, 'scripted.judge.json');
    const verdict = await judgeAnswer(
      { model: { provider: 'scripted', answers: [{ score: 0.4, reason: 'no delivery date' }] }, rubric: 'Gives the carrier and the delivery date.', passScore: 0.6 },
      question,
      { baseDir: dir, logFile },
    );
    expect(verdict).toEqual({ score: 0.4, pass: false, reason: 'no delivery date', tokens: 0 });
    const logged = JSON.parse(await readFile(logFile, 'utf8')) as Record<string, unknown>;
    expect(logged).toMatchObject({ case: 'order-1', model: { provider: 'scripted' }, verdict: { score: 0.4, pass: false }, answer: { text: '{"score":0.4,"reason":"no delivery date"}' } });
    expect(JSON.stringify(logged.messages)).toContain('Gives the carrier and the delivery date.');
  });

  it('should grade through an OpenAI-compatible server, sending the rubric and the answer, and count its tokens', async () => {
    server.enqueue({ kind: 'completion', content: 'Here: {"score": 0.9, "reason": "names the carrier"}', usage: { prompt_tokens: 80, completion_tokens: 12, total_tokens: 92 } });
    const verdict = await judgeAnswer(
      { model: { provider: 'openai-compatible', baseUrl: server.baseUrl, model: 'judge-model', maxRetries: 0 }, rubric: 'Names the carrier.' },
      question,
      { baseDir: dir, env: {}, logFile: path.join(dir, 'openai.judge.json') },
    );
    expect(verdict).toEqual({ score: 0.9, pass: true, reason: 'names the carrier', tokens: 92 });
    const sent = JSON.stringify(server.requests.at(-1)?.body);
    expect(sent).toContain('Names the carrier.');
    expect(sent).toContain('It ships with FastShip.');
    expect(sent).toContain('judge-model');
  });

  it('should refuse an answer without a score in [0, 1] with EVAL_JUDGE_ANSWER_INVALID naming the case, and log it', async () => {
    const logFile = path.join(dir, 'bad.judge.json');
    await expect(
      judgeAnswer({ model: { provider: 'scripted', answers: [{ score: 7 }] }, rubric: 'r' }, question, { baseDir: dir, logFile }),
    ).rejects.toMatchObject({ code: ErrorCode.EVAL_JUDGE_ANSWER_INVALID, message: expect.stringContaining('case "order-1": the judge did not answer') });
    expect(JSON.parse(await readFile(logFile, 'utf8'))).toMatchObject({ error: { code: ErrorCode.EVAL_JUDGE_ANSWER_INVALID } });
  });
});
