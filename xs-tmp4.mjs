import { createScriptedModel } from './dist/actors/models/scriptedModel.js';
import { serveActors } from './dist/runtime/embeddedActors.js';
import { createRecorder } from './dist/runtime/recorder.js';
import { createMemoryEventStore } from './dist/events/memoryEventStore.js';
import { systemClock } from './dist/runtime/clock.js';
const noop = { name: 'noop', description: 'x', inputSchema: { type: 'object' }, execute: () => null };
const model = createScriptedModel([{ action: 'final' }]);
const a = serveActors({ model, tools: [noop] });
const signal = new AbortController().signal;
const req = { traceId: 't', iteration: 1, messages: [] };
const treq = { traceId: 't', iteration: 1, tool: 'noop', input: {}, idempotencyKey: 'k' };
async function bench(label, n, fn) { for (let i = 0; i < 2000; i++) await fn(i); const t0 = performance.now(); for (let i = 0; i < n; i++) await fn(i); console.log(label, ((performance.now() - t0) * 1000 / n).toFixed(2), 'us'); }
await bench('model request', 100000, () => a.transport.request(a.subjects.model, req, { timeoutMs: 1000, signal }));
await bench('tool request', 100000, () => a.transport.request(a.subjects.tool('noop'), treq, { timeoutMs: 1000, signal }));
await bench('direct model', 100000, () => model.complete(req, signal));
let k = 0;
await bench('recorder 4 events', 20000, () => { const r = createRecorder({ traceId: 'r' + (k++), store: createMemoryEventStore(), clock: systemClock }); for (let i = 0; i < 4; i++) r.record({ type: 'model.requested', iteration: 1, data: { prompt: 'p' } }); });
