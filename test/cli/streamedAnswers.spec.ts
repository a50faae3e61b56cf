import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isToolUpdate, type RunChunk } from '../../src/runtime/serveActors.js';
import { createProgressPrinter } from '../../src/cli/progress.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { resumeFromLog, runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT } from '../support/cli.js';
import { answerTextOf } from '../support/answerTextOf.js';

// `redflow run` shows the model's answer on its status line while the model writes it: runFlowFile
// hands the pieces over (onChunk), and the progress printer draws the end of them on a terminal.

function captured(tty: boolean) {
  let text = '';
  const err = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
    { isTTY: tty },
  );
  return { output: { out: new Writable({ write: (_c, _e, done) => done() }), err, color: false }, text: () => text };
}

describe('answers shown as they stream', () => {
  it('should draw the end of the answer being written on the status line of a terminal, and nothing elsewhere', () => {
    const terminal = captured(true);
    const progress = createProgressPrinter(terminal.output);
    progress.onChunk({ iteration: 2, attempt: 1, text: '{"action":"final",\n"message":"Order A-1001 ' });
    progress.onChunk({ iteration: 2, attempt: 1, text: 'has shipped with FastShip on Monday, tracking FS-77812" }' });
    const lines = terminal.text().split('\r\u001b[2K');
    const last = lines[lines.length - 1] as string;
    expect(last.startsWith('  #2  the model writes: ')).toBe(true);
    expect(last.endsWith('with FastShip on Monday, tracking FS-77812" }…')).toBe(true);
    // The end of the answer only, on one line: no line break of the answer, and short enough for a terminal.
    expect(last).not.toContain('\n');
    expect(last.length).toBeLessThan(100);
    // A retry starts the answer again.
    progress.onChunk({ iteration: 2, attempt: 2, text: '{"action":' });
    expect(terminal.text().endsWith('#2  the model writes: {"action":…')).toBe(true);
    progress.done();

    const pipe = captured(false);
    createProgressPrinter(pipe.output).onChunk({ iteration: 1, attempt: 1, text: 'hello ' });
    expect(pipe.text()).toBe('');
  });

  it('should hand a flow run\'s answers to onChunk piece by piece, the pieces adding up to the answers the log holds, when run and when resumed', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-flow-chunks-'));
    try {
      const chunks: RunChunk[] = [];
      const logPath = path.join(dir, 'run.jsonl');
      const run = await runFlowFile({ flowPath: path.join(REPO_ROOT, 'examples/order-status/flow.json'), input: 'Where is order A-1001?', logPath, env: {}, onChunk: (c) => void (isToolUpdate(c) || chunks.push(c)) });
      await run.finished();
      const { events } = await readJsonlLog(logPath);
      const answers = events.flatMap((e) => (e.type === 'model.answered' ? [[e.iteration, e.data.text] as const] : []));
      expect(answers.length).toBeGreaterThan(1);
      // Each answer's pieces are its text for people: the final answer's message, nothing of a tool call.
      for (const [iteration, text] of answers) expect(chunks.filter((c) => c.iteration === iteration).map((c) => c.text).join('')).toBe(answerTextOf(text));
      expect(chunks.map((c) => c.text).join('')).not.toBe('');
      expect(chunks.every((c) => c.traceId === events[0]?.traceId)).toBe(true);

      // Resumed from its first two events, the rest of the answers are shown too.
      const cut = path.join(dir, 'cut.jsonl');
      await writeFile(cut, (await readFile(logPath, 'utf8')).split('\n').slice(0, 2).join('\n') + '\n');
      const resumedChunks: RunChunk[] = [];
      await (await resumeFromLog({ logPath: cut, env: {}, onChunk: (c) => void (isToolUpdate(c) || resumedChunks.push(c)) })).finished();
      expect(resumedChunks.map((c) => c.text).join('')).toBe(answers.map(([, text]) => answerTextOf(text)).join(''));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
