// The relay between redflow and the Stately inspector page: started on a free port, with a
// WebSocket client connecting as the page does. No browser, no network beyond 127.0.0.1.
import net from 'node:net';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { openInspectSession, replayMessages, startInspectorRelay, STATELY_INSPECTOR_URL } from '../../src/inspect/index.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { ORDER_STATUS_FLOW as FLOW, connectAsPage, eventually, statesOf, tempDir } from './inspectSupport.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function finishedRun(traceId: string): Promise<{ dir: string; logPath: string; events: readonly AgentEvent[] }> {
  const { dir, remove } = await tempDir();
  cleanups.push(remove);
  const logPath = path.join(dir, `${traceId}.jsonl`);
  await (await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId, logPath })).finished();
  return { dir, logPath, events: (await readJsonlLog(logPath)).events };
}

/** What the wire carries for a message: JSON, without undefined members. */
const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('the inspector relay', () => {
  it('relays what redflow sends to the page, live, and replays it to a page that connects later', async () => {
    const { events } = await finishedRun('relay-1');
    const session = await openInspectSession({ port: 0, open: false });
    cleanups.push(() => session.close());
    expect(session.pageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(session.opened).toBe(false);
    const early = await connectAsPage(session.pageUrl!);
    cleanups.push(() => early.close());
    session.replay(events);
    await session.flush();
    const expected = replayMessages(events).map(wire);
    await eventually(() => early.messages.length === expected.length, 5000, 'the relayed messages');
    expect(early.messages).toEqual(expected);
    // A page opened after the replay (a browser slow to start) gets it all the same.
    const late = await connectAsPage(session.pageUrl!);
    cleanups.push(() => late.close());
    await eventually(() => late.messages.length === expected.length, 5000, 'the buffered messages');
    expect(late.messages).toEqual(expected);
  });

  it('relays a live run, every state of it', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const session = await openInspectSession({ port: 0, open: false });
    cleanups.push(() => session.close());
    const page = await connectAsPage(session.pageUrl!);
    cleanups.push(() => page.close());
    const run = await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', traceId: 'relay-live-1', logPath: path.join(dir, 'run.jsonl'), inspect: session.inspectRun('relay-live-1') });
    await run.finished();
    await session.flush();
    await eventually(() => statesOf(page.messages, 'relay-live-1').at(-1) === 'done', 5000, 'the final state');
    expect(statesOf(page.messages, 'relay-live-1')).toContain('checkingStop');
  });

  it('serves the page that embeds the Stately inspector and connects back to the relay', async () => {
    const relay = await startInspectorRelay({ port: 0, open: false });
    cleanups.push(() => relay.stop());
    const response = await fetch(relay.pageUrl);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`<iframe id="inspector" src="${STATELY_INSPECTOR_URL}"`);
    expect(html).toContain("new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host)");
  });

  it('refuses browser connections from other origins, and pages asked for under another host name', async () => {
    const relay = await startInspectorRelay({ port: 0, open: false });
    cleanups.push(() => relay.stop());
    const foreign = new WebSocket(relay.socketUrl, { origin: 'http://evil.example' });
    const refused = await new Promise<string>((resolve) => {
      foreign.once('open', () => resolve('open'));
      foreign.once('error', (error) => resolve(error.message));
    });
    expect(refused).toMatch(/401/);
    const rebound = await new Promise<number>((resolve, reject) => {
      const socket = net.connect(relay.port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1])));
      socket.on('error', reject);
    });
    expect(rebound).toBe(403);
  });

  it("a port that is taken is INSPECT_UNAVAILABLE with a hint, and the process goes on", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as net.AddressInfo).port;
    const error = await openInspectSession({ port, open: false }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.INSPECT_UNAVAILABLE);
    expect((error as RedflowError).message).toContain(`port ${port}`);
    expect((error as RedflowError).hint).toContain('--inspect-port');
  });

  it('keeps at most bufferSize messages, and bufferChars characters of them, for a late page: the newest', async () => {
    const relay = await startInspectorRelay({ port: 0, open: false, bufferSize: 3, bufferChars: 40 });
    cleanups.push(() => relay.stop());
    const app = new WebSocket(relay.socketUrl);
    await new Promise((resolve) => app.once('open', resolve));
    cleanups.push(() => app.close());
    for (let n = 1; n <= 5; n++) await new Promise<void>((resolve) => app.send(JSON.stringify({ n }), () => resolve()));
    const late = await connectAsPage(relay.pageUrl);
    cleanups.push(() => late.close());
    await eventually(() => late.messages.length === 3, 5000, 'the buffered messages');
    expect(late.messages).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
    // Two messages of 30 characters do not fit in 40: the older goes.
    const padded = (n: number) => JSON.stringify({ n, pad: 'x'.repeat(16) });
    for (const n of [6, 7]) await new Promise<void>((resolve) => app.send(padded(n), () => resolve()));
    const later = await connectAsPage(relay.pageUrl);
    cleanups.push(() => later.close());
    await eventually(() => later.messages.length >= 1, 5000, 'the buffered message');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(later.messages).toEqual([JSON.parse(padded(7))]);
  });

  it('stops with a page still connected: the page is disconnected and the port freed', async () => {
    const relay = await startInspectorRelay({ port: 0, open: false });
    const page = await connectAsPage(relay.pageUrl);
    const closed = new Promise<void>((resolve) => page.socket.once('close', () => resolve()));
    await relay.stop();
    await closed;
    expect(page.socket.readyState).toBe(page.socket.CLOSED);
    const again = await startInspectorRelay({ port: relay.port, open: false });
    expect(again.port).toBe(relay.port);
    await again.stop();
  });
});
