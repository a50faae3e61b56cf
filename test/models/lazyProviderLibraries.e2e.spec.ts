import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

// The provider libraries are loaded at a model's first call, not by `import 'redflow'`: a scripted
// run (tests, demos, replays, the benchmark) never pays for them.

/** Records every module URL the process resolves, then prints which provider libraries it loaded at each stage. */
const CHILD = `
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const urls = new Set();
port1.on('message', (url) => urls.add(url));
port1.unref();
const hooks = 'let port; export function initialize(data) { port = data.port; } export async function resolve(specifier, context, next) { const result = await next(specifier, context); port.postMessage(result.url); return result; }';
register('data:text/javascript,' + encodeURIComponent(hooks), import.meta.url, { data: { port: port2 }, transferList: [port2] });
const settle = () => new Promise((done) => setTimeout(done, 100));
const libraries = () => [...urls].filter((url) => /node_modules\\/(openai|@anthropic-ai\\/sdk)\\//.test(url)).map((url) => url.includes('@anthropic-ai') ? 'anthropic' : 'openai');
const stages = {};
const redflow = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist', 'index.js')).href)});
const run = await redflow.runFlowFile({ flowPath: ${JSON.stringify(path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json'))}, input: 'Where is order A-1001?', logPath: process.argv[1] });
stages.scriptedRun = (await run.finished()).outcome.status;
await settle();
stages.afterScripted = [...new Set(libraries())];
const signal = new AbortController().signal;
const request = { traceId: 't', iteration: 1, messages: [{ role: 'user', content: 'hi' }] };
for (const model of [
  redflow.createOpenAiChatModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', maxRetries: 0 }),
  redflow.createAnthropicMessagesModel({ baseUrl: 'http://127.0.0.1:9', model: 'm', maxRetries: 0 }),
]) await model.complete(request, signal).catch(() => {});
await settle();
stages.afterModelCalls = [...new Set(libraries())].sort();
console.log(JSON.stringify(stages));
`;

describe('the provider libraries', () => {
  it('should not be loaded by import \'redflow\' and a scripted run, only by the first call of a model that needs them', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'redflow-lazy-'));
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, path.join(dir, 'run.jsonl')], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout.trim().split('\n').pop() ?? 'null')).toEqual({
      scriptedRun: 'done',
      afterScripted: [],
      afterModelCalls: ['anthropic', 'openai'],
    });
  });
});
