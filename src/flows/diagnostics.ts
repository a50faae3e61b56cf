import type { ErrorObject } from 'ajv';
import { describeSchemaErrors } from '../contracts/schemas.js';
import type { ErrorCode, ErrorInfo } from '../errors.js';

/** How bad a flow diagnostic is: an error stops the flow from running, a warning does not. */
export const Severity = {
  Error: 'error',
  Warning: 'warning',
} as const;

/** One of {@link Severity}'s values. */
export type Severity = (typeof Severity)[keyof typeof Severity];

/**
 * One problem found in a flow: an {@link ErrorInfo} (code, message, hint, path such as
 * `nodes[2].config.maxIterations` or `edges[e4]`) plus its severity and the node or edge it is about.
 */
export type FlowDiagnostic = ErrorInfo & {
  readonly severity: Severity;
  readonly nodeId?: string;
  readonly edgeId?: string;
};

/** Where a diagnostic points and how to fix it; members left `undefined` are omitted. */
export interface DiagnosticDetails {
  readonly hint?: string | undefined;
  readonly path?: string | undefined;
  readonly nodeId?: string | undefined;
  readonly edgeId?: string | undefined;
}

/**
 * Builds a {@link FlowDiagnostic} without `undefined` members, so it serialises identically everywhere.
 *
 * @example
 * ```ts
 * flowDiagnostic(Severity.Error, ErrorCode.NO_MODEL, "agent.core 'agent1' has no model", { path: 'nodes[1]' });
 * ```
 */
export function flowDiagnostic(
  severity: Severity,
  code: ErrorCode,
  message: string,
  details: DiagnosticDetails = {},
): FlowDiagnostic {
  const diagnostic: {
    severity: Severity;
    code: ErrorCode;
    message: string;
    hint?: string;
    path?: string;
    nodeId?: string;
    edgeId?: string;
  } = { severity, code, message };
  if (details.hint !== undefined) diagnostic.hint = details.hint;
  if (details.path !== undefined) diagnostic.path = details.path;
  if (details.nodeId !== undefined) diagnostic.nodeId = details.nodeId;
  if (details.edgeId !== undefined) diagnostic.edgeId = details.edgeId;
  return diagnostic;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * Appends a JSON pointer (ajv's `instancePath`, e.g. `/allowedTools/0`) to a flow path, giving
 * a readable path: `nodes[1].config` + `/allowedTools/0` → `nodes[1].config.allowedTools[0]`.
 */
export function appendPointer(base: string, pointer: string): string {
  if (pointer === '') return base;
  let path = base;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (INDEX.test(segment)) path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

/**
 * Turns ajv errors about a value found at flow path `base` into one readable sentence (with
 * {@link describeSchemaErrors}) and the path of the first error.
 */
export function explainSchemaErrors(
  base: string,
  errors: readonly ErrorObject[] | null | undefined,
): { message: string; path: string } {
  const list = errors ?? [];
  const rebased = list.map((error) => ({ ...error, instancePath: appendPointer(base, error.instancePath) || 'flow' }));
  const first = rebased[0];
  return {
    message: describeSchemaErrors(rebased),
    path: first === undefined ? base : first.instancePath,
  };
}

export { describeValue } from './describeValue.js';
