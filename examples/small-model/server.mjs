#!/usr/bin/env node
// A stand-in for a small local model (the kind Ollama or llama.cpp serve) that answers badly half
// the time: an OpenAI-compatible Chat Completions server on 127.0.0.1, streaming included, that
// answers each step's first attempt with prose and, once told what was wrong, with a valid
// decision. It ignores `response_format` the way servers without constrained output do, so the
// runs show what repair does. Usage: node server.mjs [--port 11435]
import { createServer } from 'node:http';

const portAt = process.argv.indexOf('--port');
const port = portAt > 0 ? Number(process.argv[portAt + 1]) : 11435;

/** The answer to a conversation: prose on a step's first attempt, else the next valid decision. */
function answerTo(messages) {
  const said = messages.filter((message) => message.role === 'assistant').length;
  // The model's turns so far, rejected ones included: an even count is a step's first attempt.
  if (said % 2 === 0) return 'Sure! Let me look that up for you. The order is probably on its way.';
  const looked = messages.some((message) => message.role !== 'system' && /"status"\s*:\s*"shipped"/.test(contentOf(message)));
  return JSON.stringify(
    looked
      ? { action: 'final', message: 'Order A-1001 shipped on 3 March.', confidence: 0.9 }
      : { action: 'tool', tool: 'lookup', input: { order: 'A-1001' }, confidence: 0.6 },
  );
}

function contentOf(message) {
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
}

function usageOf(messages, answer) {
  const prompt = Math.ceil(messages.map(contentOf).join('').length / 4);
  const completion = Math.ceil(answer.length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/v1/models') {
    response.writeHead(200, { 'content-type': 'application/json' });
    return response.end(JSON.stringify({ object: 'list', data: [{ id: 'small-local', object: 'model', owned_by: 'local' }] }));
  }
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404, { 'content-type': 'application/json' });
    return response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}`, type: 'invalid_request_error' } }));
  }
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (piece) => (body += piece));
  request.on('end', () => {
    const asked = JSON.parse(body);
    const answer = answerTo(asked.messages ?? []);
    const usage = usageOf(asked.messages ?? [], answer);
    const base = { id: `chatcmpl-${Date.now()}`, created: Math.floor(Date.now() / 1000), model: asked.model };
    if (!asked.stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      const choice = { index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' };
      return response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [choice], usage }));
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (chunk) => response.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...chunk })}\n\n`);
    send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    for (let at = 0; at < answer.length; at += 12) send({ choices: [{ index: 0, delta: { content: answer.slice(at, at + 12) }, finish_reason: null }] });
    send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (asked.stream_options?.include_usage) send({ choices: [], usage });
    response.end('data: [DONE]\n\n');
  });
});

server.listen(port, '127.0.0.1', () => console.log(`small-model: http://127.0.0.1:${server.address().port}/v1`));
