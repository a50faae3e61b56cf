// `redflow serve --inspect`: every run the server starts is fed to the Stately inspector. The
// messages are received on a real WebSocket server, as the inspector's relay would receive them.
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReactState } from '../../src/machines/reactState.js';
import { REPO_ROOT } from '../support/cli.js';
import { eventually, startCli, startReceiver, statesOf, tempDir } from './inspectSupport.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

describe('redflow serve --inspect', () => {
  it('feeds each run started over the API to the inspector, live, under its trace id', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'flows', 'order-status'), { recursive: true });
    const serve = startCli(['serve', '--port', '0', '--flows', 'flows', '--inspect', '--inspect-url', receiver.url], dir);
    cleanups.push(async () => {
      serve.child.kill('SIGKILL');
      await serve.exited;
    });
    await eventually(() => /http:\/\/127\.0\.0\.1:\d+/.test(serve.stdout()), 10_000, 'the printed URL');
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(serve.stdout())![0];

    const started = await fetch(`${url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ flow: 'order-status/flow', input: 'Where is A-1001?' }),
    });
    expect(started.status).toBe(201);
    const { traceId } = (await started.json()) as { traceId: string };
    await eventually(() => statesOf(receiver.messages, traceId).includes(ReactState.Done), 10_000, 'the run to reach done in the inspector');

    const registration = receiver.messages.find((m) => m.type === '@xstate.actor' && m.sessionId === traceId);
    expect(registration?.name).toBe('react');
    const states = statesOf(receiver.messages, traceId);
    expect(states).toContain(ReactState.AwaitingTool);
    expect(states.at(-1)).toBe(ReactState.Done);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('refuses the inspector flags without --inspect', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const serve = startCli(['serve', '--port', '0', '--inspect-url', 'ws://127.0.0.1:9'], dir);
    expect(await serve.exited).toBe(64);
    expect(serve.stderr()).toContain('--inspect-url needs --inspect');
  });

  it('stops before serving when the inspector cannot be reached', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const serve = startCli(['serve', '--port', '0', '--inspect', '--inspect-url', 'ws://127.0.0.1:9'], dir);
    expect(await serve.exited).toBe(69);
    expect(serve.stderr()).toContain('INSPECT_UNAVAILABLE');
    expect(serve.stdout()).not.toContain('http://');
  });
});
