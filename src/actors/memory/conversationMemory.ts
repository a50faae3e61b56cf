import { ErrorCode, RedflowError } from '../../errors.js';
import type { MemoryRecord } from '../memory.js';

/** One finished run of a conversation, as kept in its memory's `turns`. */
export interface ConversationTurn {
  /** What the run was started with. */
  readonly input: unknown;
  /** The final answer, when the run produced one. */
  readonly answer?: string;
  /** The run's outcome status (`done`, `escalate`, …). */
  readonly outcome: string;
  readonly traceId: string;
}

/**
 * Returns a new memory with `turn` appended to its `turns`, keeping only the last `maxTurns`.
 * Pure: `memory` is not changed, and its other keys are carried over as they are. A missing
 * memory, or a `turns` that is not an array, starts a fresh list. An `answer` of `undefined` is
 * left out of the stored turn. Idempotent per run: a memory that already holds a turn of
 * `turn.traceId` is returned unchanged, so a save re-sent after a crash adds the turn once.
 *
 * Throws `NODE_CONFIG_INVALID` when `maxTurns` is not an integer ≥ 1 (the flow schema's bounds).
 *
 * @example
 * ```ts
 * let memory = await store.load(conversationId);
 * memory = appendTurn(memory, { input, answer: 'Shipped', outcome: 'done', traceId }, 20);
 * await store.save(conversationId, memory);
 * ```
 */
export function appendTurn(
  memory: MemoryRecord | undefined,
  turn: { input: unknown; answer?: string; outcome: string; traceId: string },
  maxTurns: number,
): MemoryRecord {
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new RedflowError({
      code: ErrorCode.NODE_CONFIG_INVALID,
      message: `memory maxTurns must be an integer of at least 1, got ${String(maxTurns)}`,
      path: '/maxTurns',
    });
  }
  const stored: ConversationTurn =
    turn.answer === undefined
      ? { input: turn.input, outcome: turn.outcome, traceId: turn.traceId }
      : { input: turn.input, answer: turn.answer, outcome: turn.outcome, traceId: turn.traceId };
  const previous: unknown = memory?.turns;
  const earlier: unknown[] = Array.isArray(previous) ? previous : [];
  if (memory !== undefined && earlier.some((kept) => isTurnOf(kept, turn.traceId))) return memory;
  const turns = [...earlier, stored];
  return { ...memory, turns: turns.slice(-maxTurns) };
}

function isTurnOf(kept: unknown, traceId: string): boolean {
  return typeof kept === 'object' && kept !== null && (kept as { traceId?: unknown }).traceId === traceId;
}
