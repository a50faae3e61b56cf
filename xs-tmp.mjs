import { setup, createActor, fromCallback, assign, sendTo, emit } from 'xstate';
const N = 20;
const transport = fromCallback(({ sendBack, receive }) => {
  receive((c) => { Promise.resolve().then(() => sendBack(c.type === 'm' ? { type: 'answer' } : { type: 'result' })); });
});
const m = setup({ actors: { transport }, actions: {
  rec: assign(({ context }) => ({ env: { ...context.env, n: context.env.n + 1 }, last: { t: 1 } })),
  em: emit(({ context }) => ({ type: 'fact', fact: context.last })),
} }).createMachine({
  context: { i: 0, env: { n: 0 }, last: undefined },
  invoke: { id: 'transport', src: 'transport' },
  initial: 'model',
  states: {
    model: { entry: sendTo('transport', { type: 'm' }), on: { answer: { target: 'validating', actions: ['rec', 'em'] } } },
    validating: { entry: assign({ i: ({ context }) => context.i + 1 }), always: [{ guard: ({ context }) => context.i >= N, target: 'done', actions: ['rec','em'] }, { target: 'tool', actions: ['rec', 'em'] }] },
    tool: { entry: sendTo('transport', { type: 't' }), on: { result: { target: 'check', actions: ['rec', 'em'] } } },
    check: { always: [{ target: 'model', actions: ['rec', 'em'] }] },
    done: { type: 'final' },
  },
});
const run = () => new Promise((res) => { const a = createActor(m); a.on('fact', () => {}); a.subscribe((s) => { if (s.status === 'done') res(); }); a.start(); });
for (let i = 0; i < 500; i++) await run();
const t0 = performance.now();
for (let i = 0; i < 3000; i++) await run();
console.log(((performance.now() - t0) * 1000 / (3000 * N)).toFixed(1), 'us/iter minimal xstate');
