/** The subject prefix when none is configured; set another one per tenant. */
export const DEFAULT_SUBJECT_PREFIX = 'redflow';

/**
 * Every subject Redflow uses, built from a prefix so tenants can be kept apart. Tokens are
 * `.`-separated; names given by users (tool names, node ids) must be single tokens
 * (see {@link isSubjectToken}).
 *
 * @example
 * ```ts
 * Subject.tool('redflow', 'lookup_order') // 'redflow.tool.lookup_order'
 * ```
 */
export const Subject = {
  model: (prefix: string, modelId: string) => `${prefix}.model.${modelId}`,
  tool: (prefix: string, toolName: string) => `${prefix}.tool.${toolName}`,
  memoryLoad: (prefix: string, memoryId: string) => `${prefix}.memory.${memoryId}.load`,
  memoryAppend: (prefix: string, memoryId: string) => `${prefix}.memory.${memoryId}.append`,
  trace: (prefix: string, traceId: string, eventType: string) => `${prefix}.trace.${traceId}.${eventType}`,
  allTraces: (prefix: string) => `${prefix}.trace.>`,
} as const;

/** True when `name` can be one subject token (no dots, spaces, wildcards). */
export function isSubjectToken(name: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(name);
}
