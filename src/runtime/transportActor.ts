import { fromCallback } from 'xstate';
import type { ModelAnswer } from '../actors/model.js';
import type { ToolResult } from '../actors/tool.js';
import { Header, type Transport } from '../actors/transport.js';
import type { ReactEvent, TransportActorInput, TransportCommand } from '../machines/reactTypes.js';
import type { Clock } from './clock.js';

/** Where the core's requests go. */
export interface ActorSubjects {
  readonly model: string;
  tool(name: string): string;
}

/** What the transport actor of one run works with (handed over through the machine's `effects`). */
export interface TransportEffects {
  readonly transport: Transport;
  readonly subjects: ActorSubjects;
  readonly clock: Clock;
  /** Resolves when the request about to be made is logged (the recorder's `settled`). */
  readonly logged: () => Promise<void>;
  /** Longest wait for a model reply, retries included. Default 5 minutes. */
  readonly modelTimeoutMs?: number;
  /** Longest wait for a tool reply. Default 2 minutes. */
  readonly toolTimeoutMs?: number;
}

/**
 * The long-lived actor through which the REACT machine reaches its model and tools: one actor per
 * run rather than one promise actor per call (that halves the per-iteration cost), and one actor
 * logic for every run (its run's {@link TransportEffects} come in its input), so the machine is
 * provided once, not per run. It waits until a request is in the log before sending it, so every
 * effect is logged first.
 */
export const transportActorLogic = fromCallback<TransportCommand, TransportActorInput>(({ sendBack, receive, input }) => {
    const effects = input.effects?.() as TransportEffects | undefined;
    if (!effects) throw new Error('the transport actor needs the run\'s effects in its input');
    const { transport, subjects, clock, logged } = effects;
    const modelTimeoutMs = effects.modelTimeoutMs ?? 300_000;
    const toolTimeoutMs = effects.toolTimeoutMs ?? 120_000;
    const stopped = new AbortController();
    const { signal } = stopped;
    const reply = (event: ReactEvent) => {
      if (!signal.aborted) sendBack(event);
    };

    receive((command) => {
      void (async () => {
        try {
          await logged();
        } catch {
          return; // The log failed: the host is stopping the run; make no request.
        }
        if (signal.aborted) return;
        const started = clock.now();
        if (command.type === 'model.request') {
          const answer = await transport.request<typeof command.request, ModelAnswer>(subjects.model, command.request, {
            timeoutMs: modelTimeoutMs,
            signal,
          });
          const durationMs = clock.now() - started;
          if (answer.ok) {
            const { text, attempts, usage } = answer.data;
            reply({ type: 'model.answer', text, attempts, durationMs, ...(usage !== undefined && { usage }) });
          } else {
            reply({ type: 'model.failure', error: answer.error, durationMs });
          }
        } else {
          const { request } = command;
          const answer = await transport.request<typeof request, ToolResult>(subjects.tool(request.tool), request, {
            timeoutMs: toolTimeoutMs,
            signal,
            headers: { [Header.IdempotencyKey]: request.idempotencyKey, [Header.TraceId]: request.traceId },
          });
          const durationMs = clock.now() - started;
          reply({ type: 'tool.result', result: answer.ok ? answer.data : { ok: false, error: answer.error }, durationMs });
        }
      })();
    });

    return () => stopped.abort();
});
