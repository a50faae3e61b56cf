import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { parseExpectations } from '../../src/evals/caseFile.js';
import { isBroken, loadSuite } from '../../src/evals/suite.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT } from '../support/cli.js';

// A case file is checked before its case runs: whatever is wrong with it is a coded error that
// names the case and says where, and a suite with a broken case still reads its other cases.

function refusal(name: string, text: string): RedflowError {
  try {
    parseExpectations(name, text);
  } catch (error) {
    if (error instanceof RedflowError) return error;
    throw error;
  }
  throw new Error(`case ${name} was accepted`);
}

describe('an expectations file', () => {
  it('should read YAML and JSON alike', () => {
    const yaml = parseExpectations('c', 'answer:\n  contains: [FS-77812, Lyon]\ntools: [lookup_order]\nstatus: done\nlimits: { iterations: 3 }\n');
    const json = parseExpectations('c', JSON.stringify({ answer: { contains: ['FS-77812', 'Lyon'] }, tools: ['lookup_order'], status: 'done', limits: { iterations: 3 } }));
    expect(yaml).toEqual(json);
    expect(parseExpectations('c', '')).toEqual({});
  });

  it.each([
    ['text that is not YAML', 'answer: [unclosed', /its expectations are not valid YAML or JSON/, undefined],
    ['a member the format does not have', 'answr:\n  contains: x\n', /wrong at \/: must NOT have additional properties "answr"/, '/'],
    ['a status no run ends in', 'status: finished\n', /wrong at \/status: must be equal to one of the allowed values \(done, done_partial/, '/status'],
    ['a tool path that is not a list of names', 'tools: lookup_order\n', /wrong at \/tools: must be array/, '/tools'],
    ['a negative limit', 'limits:\n  tokens: -1\n', /wrong at \/limits\/tokens: must be >= 0/, '/limits/tokens'],
    ['a judge without a rubric', 'answer:\n  judge:\n    model: { provider: scripted }\n', /must have required property 'rubric'/, '/answer/judge'],
    ['a regex that does not compile', 'answer:\n  regex: "a(b"\n', /its answer.regex does not compile/, '/answer/regex'],
    ['a schema that is not one', 'answer:\n  schema: { type: 12 }\n', /its answer.schema is not a valid JSON Schema/, '/answer/schema'],
  ])('should refuse %s with EVAL_CASE_INVALID naming the case and the place', (_what, text, message, at) => {
    const error = refusal('order-7', text);
    expect(error.code).toBe(ErrorCode.EVAL_CASE_INVALID);
    expect(error.message).toMatch(/^case "order-7": /);
    expect(error.message).toMatch(message);
    expect(error.path).toBe(at);
    expect(error.hint).toBeTruthy();
  });
});

describe('a suite folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-suite-'));
    const run = await runFlowFile({ flowPath: path.join(REPO_ROOT, 'examples/order-status/flow.json'), input: 'Where is A-1001?', logPath: path.join(dir, 'good.jsonl'), fsync: 'never' });
    await run.finished();
    await writeFile(path.join(dir, 'good.eval.yaml'), 'status: done\ntools: [lookup_order, track_shipment]\n');
    // A case whose expectations are wrong, one without a log, one log without expectations, one damaged log.
    await writeFile(path.join(dir, 'wrong.eval.yaml'), 'status: nope\n');
    await writeFile(path.join(dir, 'wrong.jsonl'), '');
    await writeFile(path.join(dir, 'nolog.eval.json'), '{"status":"done"}');
    await writeFile(path.join(dir, 'orphan.jsonl'), '');
    await writeFile(path.join(dir, 'damaged.eval.yaml'), 'status: done\n');
    // The good log with the checksum of its second record broken.
    const lines = (await readFile(path.join(dir, 'good.jsonl'), 'utf8')).split('\n');
    await writeFile(path.join(dir, 'damaged.jsonl'), [lines[0], `00000000${(lines[1] as string).slice(8)}`, ...lines.slice(2)].join('\n'));
    await writeFile(path.join(dir, 'notes.txt'), 'not a case');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('should read its good cases and report each broken one with a coded error naming it', async () => {
    const suite = await loadSuite(dir);
    expect(suite.cases.map((entry) => entry.name)).toEqual(['damaged', 'good', 'nolog', 'orphan', 'wrong']);
    const good = suite.cases.find((entry) => entry.name === 'good');
    expect(good !== undefined && !isBroken(good) && good.recorded).toMatchObject({ status: 'done', tools: ['lookup_order', 'track_shipment'], input: 'Where is A-1001?', iterations: 3 });
    const broken = Object.fromEntries(suite.cases.filter(isBroken).map((entry) => [entry.name, entry.error]));
    expect(broken.damaged).toMatchObject({ code: ErrorCode.EVAL_CASE_LOG_INVALID, message: expect.stringMatching(/^case "damaged": its log is damaged at line 2: LOG_RECORD_CORRUPT/) });
    expect(broken.nolog).toMatchObject({ code: ErrorCode.EVAL_CASE_LOG_INVALID, message: 'case "nolog": there is no recorded log nolog.jsonl beside nolog.eval.json' });
    expect(broken.orphan).toMatchObject({ code: ErrorCode.EVAL_CASE_INVALID, message: 'case "orphan": orphan.jsonl has no expectations file beside it' });
    expect(broken.wrong).toMatchObject({ code: ErrorCode.EVAL_CASE_INVALID, message: expect.stringContaining('case "wrong": its expectations are wrong at /status') });
  });

  it('should refuse a folder that does not exist, or holds no case, with EVAL_SUITE_NOT_FOUND', async () => {
    await expect(loadSuite(path.join(dir, 'missing'))).rejects.toMatchObject({ code: ErrorCode.EVAL_SUITE_NOT_FOUND });
    const empty = await mkdtemp(path.join(tmpdir(), 'redflow-eval-empty-'));
    await expect(loadSuite(empty)).rejects.toMatchObject({ code: ErrorCode.EVAL_SUITE_NOT_FOUND, message: expect.stringContaining('holds no case') });
    await rm(empty, { recursive: true });
  });
});
