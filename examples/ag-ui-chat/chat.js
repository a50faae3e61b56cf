// A chat page that talks to one Redflow flow through AG-UI, with fetch and a few lines of SSE
// reading: no framework, no bundle. Open it as <server>/?flow=<flow id>[&token=<token>] from a
// server that serves this folder on the same origin as the API.
const params = new URLSearchParams(location.search);
const flow = params.get('flow') ?? 'chat';
const token = params.get('token');
const threadId = crypto.randomUUID();
/** The conversation as AG-UI messages: what each run gets. */
const messages = [];
const list = document.getElementById('messages');
const status = document.getElementById('status');
const wait = document.getElementById('wait');
/** The message bubbles being written, by message id. */
const bubbles = new Map();
/** The tool calls seen, by id: their name and arguments. */
const calls = new Map();
/** What the run that just ended waits for: an interrupt, or a frontend tool call. */
let pending;

function say(role, text) {
  const item = document.createElement('li');
  item.className = role;
  item.textContent = text;
  list.append(item);
  return item;
}

/** Runs the agent once with the conversation (and an answer to the last wait), reading its events. */
async function run(extra = {}) {
  status.textContent = 'running…';
  wait.hidden = true;
  const response = await fetch(`/api/flows/${flow}/ag-ui`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...(token && { Authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ threadId, runId: crypto.randomUUID(), messages, tools: [], context: [], ...extra }),
  });
  if (!response.ok) {
    const { error } = await response.json();
    status.textContent = `${error.code}: ${error.message}`;
    return;
  }
  // An SSE stream: frames end with a blank line; each AG-UI event is one `data:` line of JSON.
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const data = buffer.slice(0, end).split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n');
      buffer = buffer.slice(end + 2);
      if (data !== '') handle(JSON.parse(data));
    }
  }
}

function handle(event) {
  switch (event.type) {
    case 'TEXT_MESSAGE_START':
      bubbles.set(event.messageId, { item: say('assistant', ''), text: '' });
      break;
    case 'TEXT_MESSAGE_CONTENT': {
      const bubble = bubbles.get(event.messageId);
      bubble.text += event.delta;
      bubble.item.textContent = bubble.text;
      break;
    }
    case 'TEXT_MESSAGE_END':
      messages.push({ id: event.messageId, role: 'assistant', content: bubbles.get(event.messageId).text });
      break;
    case 'TOOL_CALL_START':
      calls.set(event.toolCallId, { name: event.toolCallName, args: '' });
      break;
    case 'TOOL_CALL_ARGS':
      calls.get(event.toolCallId).args += event.delta;
      break;
    case 'TOOL_CALL_END': {
      const call = calls.get(event.toolCallId);
      say('tool', `calls ${call.name} ${call.args}`);
      messages.push({ id: `${event.toolCallId}:call`, role: 'assistant', content: '', toolCalls: [{ id: event.toolCallId, type: 'function', function: { name: call.name, arguments: call.args } }] });
      break;
    }
    case 'TOOL_CALL_RESULT':
      say('tool', `${calls.get(event.toolCallId)?.name ?? 'the tool'} answered ${event.content}`);
      break;
    case 'RUN_FINISHED':
      finished(event.outcome ?? { type: 'success' });
      break;
    case 'RUN_ERROR':
      status.textContent = `failed: ${event.code}: ${event.message}`;
      break;
    default:
      break;
  }
}

/** Shows what the run waits for, if anything. */
function finished(outcome) {
  status.textContent = outcome.type === 'cancelled' ? 'cancelled' : 'done';
  const interrupt = outcome.type === 'interrupt' ? outcome.interrupts[0] : undefined;
  const toolCallId = outcome.type === 'success' ? outcome.pendingToolCallIds?.[0] : undefined;
  if (interrupt === undefined && toolCallId === undefined) return;
  pending = interrupt === undefined ? { toolCallId } : { interrupt };
  const approval = interrupt?.reason === 'tool_approval';
  document.getElementById('wait-text').textContent = interrupt === undefined ? `${calls.get(toolCallId)?.name} asks: ${calls.get(toolCallId)?.args}` : interrupt.message;
  document.getElementById('approve').hidden = !approval;
  document.getElementById('deny').hidden = !approval;
  document.getElementById('wait-input').hidden = approval;
  document.getElementById('reply').hidden = approval;
  status.textContent = 'waiting for you';
  wait.hidden = false;
}

function decide(approved) {
  const { interrupt } = pending;
  say('user', approved ? 'Approved' : 'Denied');
  void run({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved } }] });
}

document.getElementById('approve').addEventListener('click', () => decide(true));
document.getElementById('deny').addEventListener('click', () => decide(false));
document.getElementById('reply').addEventListener('click', () => {
  const text = document.getElementById('wait-input').value;
  say('user', text);
  if (pending.interrupt !== undefined) {
    void run({ resume: [{ interruptId: pending.interrupt.id, status: 'resolved', payload: { text } }] });
  } else {
    messages.push({ id: crypto.randomUUID(), role: 'tool', toolCallId: pending.toolCallId, content: JSON.stringify(text) });
    void run();
  }
});
document.getElementById('ask').addEventListener('submit', (submitted) => {
  submitted.preventDefault();
  const input = document.getElementById('text');
  if (input.value.trim() === '') return;
  say('user', input.value);
  messages.push({ id: crypto.randomUUID(), role: 'user', content: input.value });
  input.value = '';
  void run();
});
