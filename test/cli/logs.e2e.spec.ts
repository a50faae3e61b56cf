// End-to-end tests of `redflow replay` and `redflow resume` on real JSONL logs, damaged by hand.
// They spawn the real CLI (`node bin/redflow.js`), which runs the compiled dist/: `npm test` builds
// it first (pretest); with plain vitest, run `npm run build` before. One finished order-status run
// is made once; each test works on its own copy of its log in its own temporary directory.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { encodeJsonlLog } from '../../src/events/jsonlEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import {
  ORDER_ANSWER,
  assertBuilt,
  example,
  logLines,
  parseLog,
  readText,
  redflow,
  tempDirs,
  timelineLines,
  type RunJson,
} from './cliHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const INPUT = 'Where is order A-1001?';
/** The finished run every test starts from: its `run --json` output and its log's text. */
let finished: { json: RunJson; log: string; lines: string[] };

beforeAll(async () => {
  assertBuilt();
  const cwd = await dirs.make();
  const result = await redflow(['run', example('order-status'), '--input', INPUT, '--json'], { cwd });
  if (result.code !== 0) throw new Error(`the base run failed (${result.code}): ${result.stderr}`);
  const json = JSON.parse(result.stdout) as RunJson;
  const log = await readText(json.log);
  finished = { json, log, lines: logLines(log) };
});

/** A fresh directory holding `run.jsonl` with this text; returns the directory and the log's path. */
async function logWith(text: string | Buffer): Promise<{ cwd: string; log: string }> {
  const cwd = await dirs.make();
  const log = path.join(cwd, 'run.jsonl');
  await writeFile(log, text);
  return { cwd, log };
}

/** The first `k` lines of the finished log, each with its newline. */
const firstLines = (k: number) => finished.lines.slice(0, k).join('\n') + '\n';

/** The first half of a record: what a crash in the middle of a write leaves. */
const halfRecord = (line: string) => line.slice(0, Math.floor(line.length / 2));

const ORDER_TIMELINE = [
  { iteration: 1, action: 'tool', what: 'lookup_order' },
  { iteration: 2, action: 'tool', what: 'track_shipment' },
  { iteration: 3, action: 'final', what: '' },
];

interface ReplayJson {
  events: number;
  problems: { code: string; position: number }[];
  outcome: unknown;
  envelope: RunJson['envelope'];
}

describe.concurrent('redflow replay', () => {
  it('should print the timeline and the outcome of a finished run, exit 0', async ({ expect }) => {
    const { cwd } = await logWith(finished.log);
    const result = await redflow(['replay', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout.split('\n');
    expect(out[0]).toMatch(new RegExp(`^run ${finished.json.traceId}  started \\S+  ${finished.lines.length} events$`));
    expect(out[1]).toBe(`input: ${JSON.stringify(INPUT)}`);
    expect(timelineLines(result.stdout)).toEqual(ORDER_TIMELINE);
    expect(out).toContain('done (final_answer)');
    expect(out).toContain(`answer: ${ORDER_ANSWER}`);
  });

  it('should rebuild with --json the very envelope that run --json printed', async ({ expect }) => {
    const { cwd } = await logWith(finished.log);
    const result = await redflow(['replay', 'run.jsonl', '--json'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    const replayed = JSON.parse(result.stdout) as ReplayJson;
    expect(replayed.events).toBe(finished.lines.length);
    expect(replayed.problems).toEqual([]);
    expect(replayed.outcome).toEqual(finished.json.outcome);
    expect(replayed.envelope).toEqual(finished.json.envelope);
  });

  it('should report a torn last line, still show the good part and exit 0', async ({ expect }) => {
    const { cwd } = await logWith(finished.log + halfRecord(finished.lines[1]!));
    const [plain, json] = await Promise.all([redflow(['replay', 'run.jsonl'], { cwd }), redflow(['replay', 'run.jsonl', '--json'], { cwd })]);
    const torn = finished.lines.length + 1;
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(new RegExp(`^line ${torn}: LOG_RECORD_TORN `, 'm'));
    expect(timelineLines(plain.stdout)).toEqual(ORDER_TIMELINE);
    expect(plain.stdout).toContain(`answer: ${ORDER_ANSWER}`);

    expect(json.code, json.stderr).toBe(0);
    const replayed = JSON.parse(json.stdout) as ReplayJson;
    expect(replayed.problems).toMatchObject([{ code: 'LOG_RECORD_TORN', position: torn }]);
    expect(replayed.events).toBe(finished.lines.length);
    expect(replayed.envelope).toEqual(finished.json.envelope);
  });

  it('should report a torn line of an unfinished run and call the run unfinished', async ({ expect }) => {
    const { cwd } = await logWith(firstLines(5) + halfRecord(finished.lines[5]!));
    const result = await redflow(['replay', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^line 6: LOG_RECORD_TORN /m);
    expect(result.stdout).toContain('5 events');
    expect(timelineLines(result.stdout)).toEqual(ORDER_TIMELINE.slice(0, 1));
    expect(result.stdout).toContain('unfinished: `redflow resume` continues it');
    expect(result.stdout).not.toContain('answer:');
  });

  it('should report a flipped byte in the middle as LOG_RECORD_CORRUPT and exit 65', async ({ expect }) => {
    // Flip the year of line 6's time ("2…" → "3…"): the JSON still parses, only the checksum can tell.
    const lines = [...finished.lines];
    const at = lines[5]!.indexOf('"time":"') + '"time":"'.length;
    expect(lines[5]![at]).toBe('2');
    lines[5] = `${lines[5]!.slice(0, at)}3${lines[5]!.slice(at + 1)}`;
    const { cwd, log } = await logWith(lines.join('\n') + '\n');
    const [plain, json, resumed] = await Promise.all([
      redflow(['replay', 'run.jsonl'], { cwd }),
      redflow(['replay', 'run.jsonl', '--json'], { cwd }),
      redflow(['resume', 'run.jsonl'], { cwd }),
    ]);
    expect(plain.code, plain.stderr).toBe(65);
    expect(plain.stderr).toMatch(/^line 6: LOG_RECORD_CORRUPT /m);
    // The records before the damage are still shown.
    expect(plain.stdout).toContain(`run ${finished.json.traceId}`);
    expect(timelineLines(plain.stdout)[0]).toEqual(ORDER_TIMELINE[0]);

    expect(json.code, json.stderr).toBe(65);
    expect((JSON.parse(json.stdout) as ReplayJson).problems[0]).toMatchObject({ code: 'LOG_RECORD_CORRUPT', position: 6 });

    // Resume will not continue from a log damaged before its end, and leaves it as it is.
    expect(resumed.code, resumed.stderr).toBe(65);
    expect(resumed.stderr).toContain('error LOG_RECORD_CORRUPT');
    expect(await readText(log)).toBe(lines.join('\n') + '\n');
  });

  it('should exit 66 for a log that does not exist', async ({ expect }) => {
    const cwd = await dirs.make();
    const [replayed, resumed] = await Promise.all([redflow(['replay', 'nope.jsonl'], { cwd }), redflow(['resume', 'nope.jsonl'], { cwd })]);
    for (const result of [replayed, resumed]) {
      expect(result.code, result.stderr).toBe(66);
      expect(result.stderr).toContain('LOG_NOT_FOUND');
    }
  });
});

describe.concurrent('redflow resume', () => {
  it('should only print the outcome of a finished run and leave its log byte for byte', async ({ expect }) => {
    const { cwd, log } = await logWith(finished.log);
    const before = await readFile(log);
    const result = await redflow(['resume', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${ORDER_ANSWER}\n`);
    expect(result.stderr).not.toContain('resumed');
    expect(timelineLines(result.stderr)).toEqual([]);
    expect((await readFile(log)).equals(before)).toBe(true);
  });

  // The finished log: run.started, then per iteration model.requested, model.answered and, for a
  // tool, tool.requested and tool.completed; run.completed last. k = 1: only run.started; 4: a tool
  // call requested but not completed; 8: the second call requested; 11: the final answer received
  // but the outcome not logged (5, the first call completed, is in the next test).
  it.for([1, 4, 8, 11])('should finish a log cut after %i events with the same answer, after a run.resumed event', async (k, { expect }) => {
    const { cwd, log } = await logWith(firstLines(k));
    const result = await redflow(['resume', 'run.jsonl', '--json'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    const resumed = JSON.parse(result.stdout) as RunJson;
    expect(resumed.traceId).toBe(finished.json.traceId);
    expect(resumed.outcome).toEqual(finished.json.outcome);
    expect(resumed.log).toBe(log);

    const text = await readText(log);
    expect(text.startsWith(firstLines(k))).toBe(true); // what was there is kept as is
    const records = parseLog(text);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    expect(records[k]).toMatchObject({ type: 'run.resumed', data: { afterSeq: k } });
    expect(records.filter((r) => r.type === 'run.resumed')).toHaveLength(1);
    expect(records.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: finished.json.outcome } });
    // Each tool call completes exactly once: a completed call is never made again.
    const completed = records.filter((r) => r.type === 'tool.completed').map((r) => r.data.idempotencyKey);
    expect(completed).toEqual([`${finished.json.traceId}:1`, `${finished.json.traceId}:2`]);
    expect(resumed.envelope.tools.history.map((h) => [h.tool, h.status])).toEqual([
      ['lookup_order', 'succeeded'],
      ['track_shipment', 'succeeded'],
    ]);
  });

  it('should show the rest of the run live when resuming without --json', async ({ expect }) => {
    const { cwd, log } = await logWith(firstLines(5)); // the first tool call completed
    const result = await redflow(['resume', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${ORDER_ANSWER}\n`);
    expect(result.stderr).toContain(`run ${finished.json.traceId} resumed after event 5`);
    expect(timelineLines(result.stderr)).toEqual(ORDER_TIMELINE.slice(1));
    const records = parseLog(await readText(log));
    expect(records[5]).toMatchObject({ type: 'run.resumed', data: { afterSeq: 5 } });
    expect(records.filter((r) => r.type === 'tool.completed').map((r) => r.data.tool)).toEqual(['lookup_order', 'track_shipment']);
  });

  it('should cut off a torn last record, say so, and finish the run', async ({ expect }) => {
    const { cwd, log } = await logWith(firstLines(6) + halfRecord(finished.lines[6]!));
    const result = await redflow(['resume', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("the log's last record was torn (line 7); it was cut off");
    expect(result.stdout).toBe(`${ORDER_ANSWER}\n`);
    const records = parseLog(await readText(log)); // every line is whole again
    expect(records[6]).toMatchObject({ seq: 7, type: 'run.resumed', data: { afterSeq: 6 } });
    expect(records.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: finished.json.outcome } });
  });

  it('should repair the torn tail of a finished run and change nothing else', async ({ expect }) => {
    const { cwd, log } = await logWith(finished.log + halfRecord(finished.lines[0]!));
    const result = await redflow(['resume', 'run.jsonl'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`the log's last record was torn (line ${finished.lines.length + 1}); it was cut off`);
    expect(result.stdout).toBe(`${ORDER_ANSWER}\n`);
    expect(await readText(log)).toBe(finished.log);
  });
});

/** The finished run's events, to forge logs from: each forged log gets a correct checksum chain. */
const finishedEvents = () => parseLog(finished.log) as unknown as AgentEvent[];

describe.concurrent('a log valid record by record but impossible as a run', () => {
  it('should refuse a second run.completed appended after the real one: replay shows the real answer and exits 65', async ({ expect }) => {
    const events = finishedEvents();
    const last = events.at(-1) as AgentEvent & { type: 'run.completed' };
    const forged = { ...last, id: `${last.traceId}:${last.seq + 1}`, seq: last.seq + 1, data: { outcome: { status: 'done', reason: 'final_answer', answer: 'FORGED' } } };
    const { cwd } = await logWith(encodeJsonlLog([...events, forged as AgentEvent]));
    const [replayed, resumed] = await Promise.all([redflow(['replay', 'run.jsonl'], { cwd }), redflow(['resume', 'run.jsonl'], { cwd })]);
    expect(replayed.code, replayed.stderr).toBe(65);
    expect(replayed.stderr).toMatch(new RegExp(`^line ${forged.seq}: LOG_PATH_INVALID .*nothing may follow the run's ending`, 'm'));
    expect(replayed.stdout).toContain(`answer: ${ORDER_ANSWER}`);
    expect(replayed.stdout).not.toContain('FORGED');
    expect(resumed.code, resumed.stderr).toBe(65);
    expect(resumed.stdout).not.toContain('FORGED');
  });

  it('should refuse to resume a log ending in a request for a tool outside allowedTools, without calling it', async ({ expect }) => {
    const events = finishedEvents();
    // The first iteration as logged, but the agent allowed only lookup_order and the request is for track_shipment.
    const started = events[0] as AgentEvent & { type: 'run.started' };
    const narrowed = { ...started, data: { ...started.data, agent: { ...started.data.agent, allowedTools: ['lookup_order'] } } };
    const request = events[3] as AgentEvent & { type: 'tool.requested' };
    const forged = { ...request, data: { ...request.data, tool: 'track_shipment', input: { carrier: 'FastShip', trackingNumber: 'FS-77812' } } };
    const text = encodeJsonlLog([narrowed as AgentEvent, events[1]!, events[2]!, forged as AgentEvent]);
    const { cwd, log } = await logWith(text);
    const resumed = await redflow(['resume', 'run.jsonl'], { cwd });
    expect(resumed.code, resumed.stderr).toBe(65);
    expect(resumed.stderr).toContain('error LOG_PATH_INVALID');
    expect(resumed.stderr).toContain('not in the agent\'s allowedTools');
    expect(await readText(log)).toBe(text); // nothing appended: nothing ran
  });

  it('should refuse a record of another run with LOG_TRACE_MISMATCH and exit 65, for replay and resume', async ({ expect }) => {
    const events = finishedEvents();
    const stranger = { ...events[4]!, traceId: 'another-run', id: `another-run:${events[4]!.seq}` };
    const { cwd } = await logWith(encodeJsonlLog([...events.slice(0, 4), stranger]));
    const [replayed, resumed] = await Promise.all([redflow(['replay', 'run.jsonl'], { cwd }), redflow(['resume', 'run.jsonl'], { cwd })]);
    for (const result of [replayed, resumed]) {
      expect(result.code, result.stderr).toBe(65);
      expect(result.stderr).toContain('LOG_TRACE_MISMATCH');
      expect(result.stderr).not.toContain('bug');
    }
    expect(replayed.stdout).toContain('the log is damaged');
    expect(replayed.stdout).not.toContain('`redflow resume` continues it');
  });

  it('should detect a record spliced in from another log of the same run by the checksum chain', async ({ expect }) => {
    // A second run with the same trace id: its records have their own times, and their own valid checksums.
    const cwd = await dirs.make();
    const other = await redflow(['run', example('order-status'), '--input', INPUT, '--json', '--trace-id', finished.json.traceId], { cwd });
    expect(other.code, other.stderr).toBe(0);
    const otherLines = logLines(await readText((JSON.parse(other.stdout) as RunJson).log));
    const spliced = [...finished.lines];
    spliced[1] = otherLines[1]!; // the other log's line 2, checksum and all
    expect(spliced[1]).not.toBe(finished.lines[1]);
    const { cwd: here } = await logWith(spliced.join('\n') + '\n');
    const replayed = await redflow(['replay', 'run.jsonl', '--json'], { cwd: here });
    expect(replayed.code, replayed.stderr).toBe(65);
    expect((JSON.parse(replayed.stdout) as ReplayJson).problems[0]).toMatchObject({ code: 'LOG_RECORD_CORRUPT', position: 2 });
  });
});
