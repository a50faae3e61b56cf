// docs/ag-ui.md as written: its mapping tables are the mapping's table (src/server/aguiEventMap.ts),
// its curl body and its HttpAgent block run against `redflow serve` on the order-status example.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGUI_EVENT_MAP, AGUI_OTHER_MAP } from '../../src/server/aguiEventMap.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { call } from '../server/serverHarness.js';
import { ROOT, codeBlocks, readPage } from './docPages.js';

const run = promisify(execFile);
const page = readPage('docs/ag-ui.md');
const blocks = codeBlocks(page);

let server: RedflowServer;
let dir: string;
beforeAll(async () => {
  // Inside the repository, so that the block's import of @ag-ui/client resolves from its node_modules.
  dir = await mkdtemp(path.join(ROOT, 'test-artifacts-agui-doc-'));
  server = await createRedflowServer({ flowsDir: path.join(ROOT, 'examples'), runsDir: path.join(dir, 'runs'), editorDir: path.join(dir, 'editor'), port: 0, env: {} });
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the AG-UI page (docs/ag-ui.md)', () => {
  it('should show the mapping exactly as the mapping\'s table has it, every Redflow event once', () => {
    for (const [type, row] of Object.entries(AGUI_EVENT_MAP)) expect(page).toContain(`| \`${type}\` | ${row.becomes} |`);
    for (const [what, text] of Object.entries(AGUI_OTHER_MAP)) expect(page).toContain(`| ${what} | ${text} |`);
  });

  it('should start the run its curl command starts, and stream it to RUN_FINISHED', async () => {
    const curl = blocks.find((block) => block.lang === 'sh' && block.code.includes('/ag-ui'));
    const body = /-d '([^']+)'/.exec(curl?.code ?? '')?.[1] ?? '';
    const flow = /\/api\/flows\/([\w/-]+)\/ag-ui/.exec(curl?.code ?? '')?.[1] ?? '';
    const answer = await call(server, 'POST', `/api/flows/${flow}/ag-ui`, { rawBody: body, headers: { 'content-type': 'application/json', accept: 'text/event-stream' } });
    expect(answer.status, answer.text).toBe(200);
    const events = answer.text.split('\n\n').flatMap((frame) => frame.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as { type: string; outcome?: unknown }));
    expect(events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-1' });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  });

  it('should run its HttpAgent block as written against the server', async () => {
    const block = blocks.find((each) => each.lang === 'ts' && each.code.includes('HttpAgent'));
    const file = path.join(dir, 'httpAgent.run.mts');
    await writeFile(file, (block?.code ?? '').replace('http://127.0.0.1:4800/', server.url));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { cwd: dir, timeout: 30_000 });
    expect(stdout).toContain('calls lookup_order');
    expect(stdout).toContain('calls track_shipment');
    expect(stdout).toContain("done { type: 'success' }");
    expect(stdout.trim().split('\n').at(-1)).toMatch(/^Order A-1001 shipped with FastShip/);
  });
});
