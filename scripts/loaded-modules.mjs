#!/usr/bin/env node
// What importing a module loads: `node scripts/loaded-modules.mjs <specifier or path> [--time N]`
// prints JSON with every ES module URL and CommonJS file it loaded, the Node built-ins it pulled in,
// and (with --time) the median wall time of N imports, each in a fresh process without the hooks
// (the hooks' loader thread would slow the import they measure). test/packaging uses it to hold
// `import 'redflow'` to what an embedded run needs.
import { execFileSync } from 'node:child_process';
import { createRequire, register } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const [target, ...rest] = process.argv.slice(2);
if (!target) {
  process.stderr.write('usage: node scripts/loaded-modules.mjs <specifier or path> [--time N]\n');
  process.exit(2);
}
const timeIndex = rest.indexOf('--time');
const runs = timeIndex === -1 ? 0 : Number(rest[timeIndex + 1] ?? 5);
const specifier = target.startsWith('.') || isAbsolute(target) ? pathToFileURL(resolve(target)).href : target;

// The resolve hook runs on the loader thread: it posts every URL it resolves back to this thread.
const hooks = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;
const { port1, port2 } = new MessageChannel();
const urls = new Set();
port1.on('message', (url) => urls.add(url));
register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url, { data: { port: port2 }, transferList: [port2] });

const builtinsBefore = new Set(process.moduleLoadList);
const cjsBefore = new Set(Object.keys(createRequire(import.meta.url).cache));
await import(specifier);
// Let the last messages from the loader thread arrive.
await new Promise((done) => setTimeout(done, 50));
port1.close();

const esm = [...urls].filter((url) => url.startsWith('file:')).sort();
const cjs = Object.keys(createRequire(import.meta.url).cache).filter((file) => !cjsBefore.has(file)).sort();
// Node's own modules this import loaded, by their public name (`NativeModule _http_server` → `_http_server`).
const builtins = process.moduleLoadList
  .filter((entry) => !builtinsBefore.has(entry) && entry.startsWith('NativeModule '))
  .map((entry) => entry.slice('NativeModule '.length))
  .sort();
const files = [...new Set([...esm.map((url) => new URL(url).pathname), ...cjs])].sort();

let medianMs;
if (runs > 0) {
  const script = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
  const times = [];
  for (let i = 0; i < runs; i++) {
    times.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })));
  }
  times.sort((a, b) => a - b);
  medianMs = Math.round(times[Math.floor(times.length / 2)]);
}

process.stdout.write(`${JSON.stringify({ target, count: files.length, medianMs, files, builtins }, null, 2)}\n`);
process.exit(0);
