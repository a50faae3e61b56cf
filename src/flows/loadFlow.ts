import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ErrorCode, RedflowError } from '../errors.js';
import { Severity, flowDiagnostic } from './diagnostics.js';
import { locateJsonSyntaxError } from '../files/jsonSyntaxError.js';
import { type FlowValidation, validateFlow } from './validateFlow.js';

export { formatDiagnostic, formatDiagnostics } from './formatDiagnostics.js';

/** The largest flow file {@link loadFlowFile} reads: 5 MiB. */
export const MAX_FLOW_FILE_BYTES = 5 * 1024 * 1024;

/** A flow file read from disk and validated. */
export interface LoadedFlow {
  /** The file's absolute path. */
  readonly path: string;
  /** The folder holding the file: paths in the flow (tool modules, answer files, memory) are relative to it. */
  readonly baseDir: string;
  readonly validation: FlowValidation;
}

const BYTE_ORDER_MARK = '\uFEFF';

/** Options of {@link loadFlowFile}. */
export interface LoadFlowOptions {
  /**
   * How messages name the file (a flow id, for `redflow serve`, whose answers must not show the
   * server's paths); default its absolute path.
   */
  readonly shownAs?: string;
}

/**
 * Reads and validates a flow file. A file that is not JSON gives a validation result with
 * `FLOW_INVALID_JSON` (with its line and column); a missing file throws a {@link RedflowError}
 * `FLOW_NOT_FOUND`, a file over {@link MAX_FLOW_FILE_BYTES} one with `FLOW_TOO_LARGE`.
 *
 * @example
 * ```ts
 * const loaded = await loadFlowFile('examples/order-status/flow.json');
 * if (!loaded.validation.ok) {
 *   console.error(formatDiagnostics(loaded.validation.errors));
 *   process.exitCode = 1;
 * }
 * ```
 */
export async function loadFlowFile(path: string, options: LoadFlowOptions = {}): Promise<LoadedFlow> {
  const absolute = resolve(path);
  const shown = options.shownAs ?? absolute;
  const bytes = await readLimited(absolute, path, options.shownAs);
  const baseDir = dirname(absolute);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return {
      path: absolute,
      baseDir,
      validation: invalidJson(`${shown} is not UTF-8 text`, 'save the flow file as UTF-8 JSON'),
    };
  }
  return { path: absolute, baseDir, validation: parseFlowText(text, shown) };
}

/**
 * Parses a flow's JSON text and validates it. `sourceName` (a file name, "editor", …) names the
 * text in messages. A syntax error gives `FLOW_INVALID_JSON` with its line and column.
 *
 * @example
 * ```ts
 * const result = parseFlowText('{ "nodes": [], }', 'flow.json');
 * // result.ok === false; result.errors[0].code === 'FLOW_INVALID_JSON'
 * // result.errors[0].message: "flow.json is not valid JSON at line 1, column 16: a trailing comma is not allowed: …"
 * ```
 */
export function parseFlowText(text: string, sourceName: string): FlowValidation {
  const body = text.startsWith(BYTE_ORDER_MARK) ? text.slice(BYTE_ORDER_MARK.length) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (thrown) {
    const location = locateJsonSyntaxError(body);
    if (location === undefined) {
      const reason = thrown instanceof Error ? thrown.message : 'unknown error';
      return invalidJson(`${sourceName} is not valid JSON: ${reason}`, 'fix the JSON syntax');
    }
    const at = `line ${location.line}, column ${location.column}`;
    return invalidJson(
      `${sourceName} is not valid JSON at ${at}: ${location.reason}`,
      `fix the JSON at ${at} (look for a missing or extra comma, quote or bracket)`,
    );
  }
  return validateFlow(value);
}

function invalidJson(message: string, hint: string): FlowValidation {
  return { ok: false, errors: [flowDiagnostic(Severity.Error, ErrorCode.FLOW_INVALID_JSON, message, { hint })], warnings: [] };
}

/** Reads the whole file, refusing one over the limit (checked before and while reading); errors name it `shownAs` when given. */
async function readLimited(absolute: string, given: string, shownAs: string | undefined): Promise<Uint8Array> {
  let handle;
  try {
    handle = await open(absolute, 'r');
  } catch (thrown) {
    throw notFound(absolute, given, thrown, shownAs);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new RedflowError(
        { code: ErrorCode.FLOW_NOT_FOUND, message: `${shownAs ?? absolute} is not a file`, hint: 'give the path of a flow .json file, not a folder' },
      );
    }
    if (stats.size > MAX_FLOW_FILE_BYTES) throw tooLarge(absolute, stats.size, shownAs);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const chunk = new Uint8Array(64 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_FLOW_FILE_BYTES) throw tooLarge(absolute, total, shownAs);
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } catch (thrown) {
    if (thrown instanceof RedflowError) throw thrown;
    throw notFound(absolute, given, thrown, shownAs);
  } finally {
    await handle.close();
  }
}

function notFound(absolute: string, given: string, cause: unknown, shownAs: string | undefined): RedflowError {
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String((cause as { code: unknown }).code) : '';
  const missing = code === 'ENOENT' || code === 'ENOTDIR';
  return new RedflowError(
    {
      code: ErrorCode.FLOW_NOT_FOUND,
      message: missing
        ? `flow file not found: ${shownAs ?? absolute}`
        : `flow file ${shownAs ?? absolute} cannot be read${code === '' ? '' : ` (${code})`}`,
      hint: missing
        ? shownAs === undefined
          ? `check the path '${given}' (relative paths are resolved from ${process.cwd()})`
          : 'check that the flow exists'
        : 'check that the file exists and that you may read it',
      ...(shownAs === undefined && { path: absolute }),
    },
    { cause },
  );
}

function tooLarge(absolute: string, size: number, shownAs: string | undefined): RedflowError {
  return new RedflowError({
    code: ErrorCode.FLOW_TOO_LARGE,
    message: `flow file ${shownAs ?? absolute} is larger than the ${MAX_FLOW_FILE_BYTES / (1024 * 1024)} MiB limit (at least ${size} bytes)`,
    hint: 'a flow holds nodes and edges only: move large data (scripted answers, schemas) into separate files',
    ...(shownAs === undefined && { path: absolute }),
  });
}
