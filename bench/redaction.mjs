#!/usr/bin/env node
// The cost of redacting secrets from actor replies (`redactReply`, which the transport actor applies
// to every model and tool reply), per reply, with the secrets of this process's environment plus
// 0, 10 and 100 more, on model answers and tool outputs of typical and large sizes: the common
// case (no secret in the reply) and the case with one. Prints µs per reply (median of rounds).
import { performance } from 'node:perf_hooks';
import { redactReply } from '../dist/runtime/redactReply.js';
import { createSecretRegistry, registerSecret } from '../dist/secrets/secrets.js';

const ROUNDS = 7;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const randomSecret = () => `sk-${Array.from({ length: 16 + Math.floor(random() * 32) }, () => letters[Math.floor(random() * letters.length)]).join('')}`;

const sentence = 'Order A-1001 shipped with FastShip (tracking FS-77812); last scanned at the Lyon sorting centre. ';
const answerOf = (chars) => ({ ok: true, data: { text: JSON.stringify({ action: 'final', message: sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars), confidence: 0.9 }), attempts: 1, usage: { promptTokens: 812, completionTokens: 64, totalTokens: 876 } } });
const rowsOf = (count) => ({
  ok: true,
  data: {
    ok: true,
    output: {
      status: 200,
      contentType: 'application/json',
      body: { rows: Array.from({ length: count }, (_, i) => ({ id: `A-${1000 + i}`, status: i % 2 ? 'shipped' : 'processing', carrier: 'FastShip', total: 10.5 + i, note: sentence })) },
    },
  },
});
const failure = { ok: false, error: { code: 'TOOL_HTTP_STATUS', message: "http tool 'lookup': GET http://127.0.0.1/orders answered HTTP 502: bad gateway", retryable: true } };

/** µs per call of `fn`, median of rounds of at least ~20 ms each. */
function measure(fn) {
  let calls = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) fn();
    if (performance.now() - start > 20) break;
    calls *= 2;
  }
  return median(
    Array.from({ length: ROUNDS }, () => {
      const start = performance.now();
      for (let i = 0; i < calls; i++) fn();
      return ((performance.now() - start) / calls) * 1000;
    }),
  );
}

const envSecrets = createSecretRegistry();
envSecrets.addEnv(process.env);
const payloads = [
  ['model answer, 300 characters', answerOf(300)],
  ['model answer, 3,000 characters', answerOf(3000)],
  ['tool output, 5 rows (≈ 0.7 KB)', rowsOf(5)],
  ['tool output, 1,000 rows (≈ 150 KB)', rowsOf(1000)],
  ['tool error', failure],
];

console.log(`Redaction of actor replies (redactReply), µs per reply, median of ${ROUNDS} rounds`);
console.log(`  this environment's secret-looking values: ${envSecrets.size} (with their JSON/URL forms)`);
let registered = 0;
for (const extra of [0, 10, 100]) {
  while (registered < extra) {
    registerSecret(randomSecret());
    registered++;
  }
  console.log(`  + ${extra} registered secrets:`);
  for (const [name, reply] of payloads) {
    const clean = measure(() => redactReply(reply));
    console.log(`    ${name.padEnd(38)} ${clean.toFixed(2).padStart(8)} µs`);
  }
}
// A reply that holds a secret: the copy with it cut out.
const secret = randomSecret();
registerSecret(secret);
const leaking = answerOf(3000);
leaking.data.text = leaking.data.text.replace('FastShip', secret);
const leakingRows = rowsOf(1000);
leakingRows.data.output.body.rows[500].note = `token ${secret}`;
console.log('  a reply holding a secret (redacted copy):');
console.log(`    ${'model answer, 3,000 characters'.padEnd(38)} ${measure(() => redactReply(leaking)).toFixed(2).padStart(8)} µs`);
console.log(`    ${'tool output, 1,000 rows (≈ 150 KB)'.padEnd(38)} ${measure(() => redactReply(leakingRows)).toFixed(2).padStart(8)} µs`);
