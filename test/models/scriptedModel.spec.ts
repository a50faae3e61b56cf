import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import type { ModelRequest } from '../../src/actors/model.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { caught } from '../support/modelCalls.js';
import { thrown } from '../support/thrown.js';

function request(iteration: number): ModelRequest {
  return { traceId: 'trace-1', iteration, messages: [{ role: 'user', content: 'hi' }] };
}

describe('createScriptedModel', () => {
  const signal = new AbortController().signal;

  it('should answer by request.iteration, not by call count', async () => {
    const model = createScriptedModel(['first', 'second', 'third']);
    expect(model.kind).toBe('scripted');
    // Out of order and repeated, as after a resume.
    expect((await model.complete(request(2), signal)).text).toBe('second');
    expect((await model.complete(request(1), signal)).text).toBe('first');
    expect((await model.complete(request(2), signal)).text).toBe('second');
    expect((await model.complete(request(3), signal)).text).toBe('third');
  });

  it('should return strings as-is, even invalid JSON', async () => {
    const model = createScriptedModel(['{"action": "final", oops', '  spaced  ']);
    expect((await model.complete(request(1), signal)).text).toBe('{"action": "final", oops');
    expect((await model.complete(request(2), signal)).text).toBe('  spaced  ');
  });

  it('should JSON.stringify non-string answers', async () => {
    const answers = [{ action: 'final', message: 'done', confidence: 0.9 }, 42, null, [1, 'two'], true];
    const model = createScriptedModel(answers);
    const texts = await Promise.all(answers.map((_, i) => model.complete(request(i + 1), signal).then((a) => a.text)));
    expect(texts).toEqual(['{"action":"final","message":"done","confidence":0.9}', '42', 'null', '[1,"two"]', 'true']);
  });

  it('should not be affected by later mutation of the answers array', async () => {
    const answers: unknown[] = [{ n: 1 }];
    const model = createScriptedModel(answers);
    (answers[0] as { n: number }).n = 2;
    answers[0] = 'changed';
    expect((await model.complete(request(1), signal)).text).toBe('{"n":1}');
  });

  it('should report attempts 1 and no usage', async () => {
    const answer = await createScriptedModel(['x']).complete(request(1), signal);
    expect(answer).toEqual({ text: 'x', attempts: 1 });
    expect('usage' in answer).toBe(false);
  });

  it('should throw MODEL_SCRIPT_EXHAUSTED beyond the script, saying how many answers it has', async () => {
    const model = createScriptedModel(['a', 'b']);
    const error = await caught(model.complete(request(3), signal));
    expect(error.code).toBe(ErrorCode.MODEL_SCRIPT_EXHAUSTED);
    expect(error.message).toContain('2 answers');
    expect(error.message).toContain('iteration 3');
    expect(error.hint).toBeTruthy();
    expect(error.retryable).toBe(false);
  });

  it('should use the singular for a one-answer script', async () => {
    const error = await caught(createScriptedModel(['a']).complete(request(2), signal));
    expect(error.message).toContain('1 answer ');
  });

  it('should throw MODEL_SCRIPT_EXHAUSTED for an empty script and for iterations below 1', async () => {
    expect((await caught(createScriptedModel([]).complete(request(1), signal))).code).toBe(ErrorCode.MODEL_SCRIPT_EXHAUSTED);
    const model = createScriptedModel(['a']);
    expect((await caught(model.complete(request(0), signal))).code).toBe(ErrorCode.MODEL_SCRIPT_EXHAUSTED);
    expect((await caught(model.complete(request(1.5), signal))).code).toBe(ErrorCode.MODEL_SCRIPT_EXHAUSTED);
  });

  it('should reject answers JSON cannot represent with MODEL_CONFIG_INVALID', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [undefined, cyclic, 10n, () => 1]) {
      const error = thrown(() => createScriptedModel(['ok', bad]));
      expect(error).toBeInstanceOf(RedflowError);
      expect((error as RedflowError).code).toBe(ErrorCode.MODEL_CONFIG_INVALID);
      expect((error as RedflowError).path).toBe('/answers/1');
    }
  });

  it('should wait delayMs before answering', async () => {
    const model = createScriptedModel(['slow'], { delayMs: 60 });
    const started = performance.now();
    const answer = await model.complete(request(1), signal);
    expect(answer.text).toBe('slow');
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
  });

  it('should stop waiting with RUN_ABORTED when aborted during the delay', async () => {
    const model = createScriptedModel(['slow'], { delayMs: 10_000 });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 20);
    const error = await caught(model.complete(request(1), controller.signal));
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    expect(performance.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
  });

  it('should throw RUN_ABORTED at once for an already aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await caught(createScriptedModel(['x']).complete(request(1), controller.signal));
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
  });
});
