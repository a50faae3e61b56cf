import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { McpCallResult } from './mcpConnection.js';

/** A content part that is not text, as the model is told of it: what it is, never its bytes. */
export interface DescribedPart {
  readonly type: string;
  readonly mimeType?: string;
  /** Decoded size of an image's, audio's or blob resource's data. */
  readonly bytes?: number;
  readonly uri?: string;
  readonly name?: string;
  /** A text resource's text. */
  readonly text?: string;
}

/**
 * What the model sees of an MCP tool's result: its `structuredContent` when it has one, else its
 * text parts joined; with other parts (images, audio, resources), an object of `structured` or
 * `text` and `parts`, each described (type, MIME type, size or URI), never their bytes. An `isError` result is the call's
 * `TOOL_FAILED` with the server's text, and a result longer than `maxBytes` as JSON is
 * `TOOL_RESPONSE_TOO_LARGE`: both are the observation the model sees next.
 *
 * @example
 * ```ts
 * mcpObservation({ content: [{ type: 'text', text: 'hi' }] }, 'echo', 1024); // 'hi'
 * mcpObservation({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }, 'shot', 1024);
 * // { parts: [{ type: 'image', mimeType: 'image/png', bytes: 3 }] }
 * ```
 */
export function mcpObservation(result: McpCallResult, tool: string, maxBytes: number): unknown {
  const texts: string[] = [];
  const parts: DescribedPart[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else parts.push(describePart(part));
  }
  const text = texts.join('\n');
  if (result.isError === true) {
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_FAILED, `tool '${tool}' returned an error: ${text === '' ? 'no message' : text.slice(0, 2000)}`, {
        hint: 'read the error, then call the tool again with a corrected input or try another way',
      }),
    );
  }
  const observation = observationOf(text, result.structuredContent, parts);
  const size = Buffer.byteLength(JSON.stringify(observation) ?? '');
  if (size > maxBytes) {
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_RESPONSE_TOO_LARGE, `tool '${tool}' returned ${size} bytes, more than the ${maxBytes} its node allows`, {
        hint: 'ask the tool for less (a page, a summary), or raise the node\'s "maxResultBytes"',
      }),
    );
  }
  return observation;
}

/**
 * The `structuredContent` wins over the text parts: the MCP spec makes them its copy for older
 * clients, and the model need not read it twice.
 */
function observationOf(text: string, structured: Record<string, unknown> | undefined, parts: readonly DescribedPart[]): unknown {
  if (parts.length === 0) return structured ?? text;
  return structured === undefined ? { ...(text !== '' && { text }), parts } : { structured, parts };
}

function describePart(part: Record<string, unknown>): DescribedPart {
  const type = typeof part.type === 'string' ? part.type : 'unknown';
  if (type === 'image' || type === 'audio') {
    return { type, ...mime(part.mimeType), ...(typeof part.data === 'string' && { bytes: base64Bytes(part.data) }) };
  }
  if (type === 'resource_link') {
    return { type, ...(typeof part.uri === 'string' && { uri: part.uri }), ...(typeof part.name === 'string' && { name: part.name }), ...mime(part.mimeType) };
  }
  if (type === 'resource' && typeof part.resource === 'object' && part.resource !== null) {
    const resource = part.resource as Record<string, unknown>;
    return {
      type,
      ...(typeof resource.uri === 'string' && { uri: resource.uri }),
      ...mime(resource.mimeType),
      ...(typeof resource.text === 'string' && { text: resource.text }),
      ...(typeof resource.blob === 'string' && { bytes: base64Bytes(resource.blob) }),
    };
  }
  return { type };
}

function mime(value: unknown): { mimeType?: string } {
  return typeof value === 'string' ? { mimeType: value } : {};
}

/** The decoded size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
