import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun, type StartRunOptions } from '../../src/runtime/runAgent.js';
import type { RunResult } from '../../src/runtime/runSession.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import type { MemoryStore } from '../../src/actors/memory.js';
import type { ModelActor } from '../../src/actors/model.js';
import { createInProcessMemoryStore } from '../../src/actors/memory/inProcessMemoryStore.js';

/** A tool whose calls are counted: `echo` returns its input. */
export function countingTool(name = 'echo', behaviour: (input: Record<string, unknown>) => unknown = (input) => ({ echoed: input })) {
  const calls: Record<string, unknown>[] = [];
  const tool: ToolDefinition = {
    name,
    description: `returns what it is given (${name})`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
    execute: (input) => {
      calls.push(input);
      return behaviour(input);
    },
  };
  return { tool, calls };
}

/** An agent config with defaults for tests. */
export function agentConfig(overrides: Partial<AgentCoreReactConfig> = {}): AgentCoreReactConfig {
  return { strategy: 'react', maxIterations: 5, allowedTools: ['echo'], stopConditions: [], debug: false, ...overrides };
}

/** Runs scripted answers against tools in embedded mode, with a deterministic clock and trace id. */
export async function runScripted(options: {
  answers: readonly unknown[];
  tools?: readonly ToolDefinition[];
  agent?: AgentCoreReactConfig;
  input?: unknown;
  extra?: Partial<StartRunOptions>;
  /** Keep the run's turn in this conversation (of `memoryStore`, a new in-process one by default). */
  conversationId?: string;
  memoryStore?: MemoryStore;
}): Promise<{ result: RunResult; events: AgentEvent[]; modelCalls: number }> {
  const inner = createScriptedModel(options.answers);
  let modelCalls = 0;
  const model = {
    kind: inner.kind,
    complete: (...args: Parameters<typeof inner.complete>) => {
      modelCalls++;
      return inner.complete(...args);
    },
  };
  const tools = options.tools ?? [countingTool().tool];
  const memoryStore = options.conversationId === undefined ? undefined : (options.memoryStore ?? createInProcessMemoryStore());
  const actors = serveActors({ model, tools, ...(memoryStore && { memory: memoryStore }) });
  const store = createMemoryEventStore();
  try {
    const run = startRun({
      ...actors,
      agent: options.agent ?? agentConfig(),
      store,
      input: options.input ?? 'hello',
      traceId: 'trace-1',
      clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1),
      ...(actors.memorySubjects && options.conversationId !== undefined && {
        memory: { ...actors.memorySubjects, conversationId: options.conversationId },
      }),
      ...options.extra,
    });
    const result = await run.result;
    const { events } = await store.read(run.traceId);
    return { result, events: [...events], modelCalls };
  } finally {
    await actors.close();
  }
}

/** Shorthand answers. */
export const answer = {
  tool: (tool: string, input: Record<string, unknown> = {}, confidence = 0.5) => ({ action: 'tool', tool, input, confidence }),
  final: (message: string, confidence = 0.9) => ({ action: 'final', message, confidence }),
};

/** Runs `model` (a real provider's actor, say) against tools in embedded mode, as {@link runScripted} runs scripted answers. */
export async function runWithModel(
  model: ModelActor,
  options: { tools?: readonly ToolDefinition[]; agent?: AgentCoreReactConfig; input?: unknown } = {},
): Promise<{ result: RunResult; events: AgentEvent[] }> {
  const actors = serveActors({ model, tools: options.tools ?? [countingTool().tool] });
  const store = createMemoryEventStore();
  try {
    const run = startRun({
      ...actors,
      agent: options.agent ?? agentConfig(),
      store,
      input: options.input ?? 'hello',
      traceId: 'trace-1',
      clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1),
    });
    const result = await run.result;
    return { result, events: [...(await store.read(run.traceId)).events] };
  } finally {
    await actors.close();
  }
}
