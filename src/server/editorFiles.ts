import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { isInside } from './flowIds.js';
import { sendJson } from './respond.js';
import { publicText } from './publicText.js';

/**
 * Where the editor's build is: `dist/editor` of the package. Found from this file, which is two
 * folders below the package root both as source (`src/server`) and compiled (`dist/server`).
 */
export const DEFAULT_EDITOR_DIR = fileURLToPath(new URL('../../dist/editor/', import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.webmanifest': 'application/manifest+json',
};

const INDEX = 'index.html';

/**
 * The Content Security Policy of the editor's files: scripts, styles and requests only to this
 * server, no inline script and no `eval` (the editor's config validators are compiled at build
 * time for that), images from here or `data:` (the icon), no plugins, no `<base>`. A script
 * injected into the page (say, through a flow's text) could not run, nor send what it read elsewhere.
 * The Stately inspector opens in a window of its own, which the policy does not govern.
 */
export const EDITOR_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Serves one request for the editor's files. */
export type EditorFiles = (req: IncomingMessage, res: ServerResponse, pathname: string) => Promise<void>;

/**
 * Serves the editor's static build from `dir`: its files with their content types, and
 * `index.html` for any other path without a file extension (the editor's own routes). A path
 * that leaves the directory, even through a link, is not served; neither are dot-files.
 *
 * Vite names the files of `assets/` by their content's hash, so they are cached for good;
 * `index.html` is revalidated each time, so a new build is picked up at once. Every file goes with
 * {@link EDITOR_CONTENT_SECURITY_POLICY} and `X-Content-Type-Options: nosniff`. When the directory
 * holds no build, the answer is a 503 saying to run `npm run build`.
 *
 * @example
 * ```ts
 * const editor = createEditorFiles('dist/editor');
 * http.createServer((req, res) => editor(req, res, new URL(req.url ?? '/', 'http://x').pathname));
 * ```
 */
export function createEditorFiles(dir: string): EditorFiles {
  const root = path.resolve(dir);
  return async (req, res, pathname) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new ApiError(errorInfo(ErrorCode.HTTP_METHOD_NOT_ALLOWED, `${req.method ?? '?'} is not allowed here: the editor's files are read-only`), {
        headers: { Allow: 'GET, HEAD' },
      });
    }
    const realRoot = await realpath(root).catch(() => undefined);
    const index = realRoot && (await fileStats(path.join(realRoot, INDEX)));
    if (!realRoot || !index) return notBuilt(req, res, root);

    const wanted = decodePath(pathname);
    const segments = wanted?.split('/').filter((segment) => segment !== '');
    if (!wanted || !segments || segments.some((segment) => segment.startsWith('.') || segment.includes('\\') || segment.includes('\0'))) {
      throw notFound(pathname);
    }
    if (segments.length > 0) {
      const file = path.join(realRoot, ...segments);
      const real = isInside(realRoot, file) ? await realpath(file).catch(() => undefined) : undefined;
      const stats = real && isInside(realRoot, real) ? await fileStats(real) : undefined;
      if (real && stats) return sendFile(req, res, real, stats.size, segments[0] === 'assets');
      // A missing file with an extension is a broken link, not a page of the editor: 404 beats HTML.
      if (path.extname(segments[segments.length - 1] as string) !== '') throw notFound(pathname);
    }
    return sendFile(req, res, path.join(realRoot, INDEX), index.size, false);
  };
}

async function sendFile(req: IncomingMessage, res: ServerResponse, file: string, size: number, immutable: boolean): Promise<void> {
  res.writeHead(200, {
    'Content-Type': CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': size,
    'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'Content-Security-Policy': EDITOR_CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(createReadStream(file), res);
}

function notBuilt(req: IncomingMessage, res: ServerResponse, root: string): void {
  // Named by its file only: where the package lies on the server is not the client's business.
  const message = publicText(`the editor is not built (no ${path.join(root, INDEX)})`);
  const hint = 'run `npm run build` in the redflow package, then reload; the API under /api works meanwhile';
  if ((req.headers.accept ?? '').includes('text/html')) {
    const html = `<!doctype html><meta charset="utf-8"><title>redflow: editor not built</title>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>The editor is not built</h1><p>${escapeHtml(message)}.</p><p>${escapeHtml(hint)}.</p></body>\n`;
    res.writeHead(503, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(html), 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : html);
    return;
  }
  sendJson(res, 503, { error: errorInfo(ErrorCode.EDITOR_NOT_BUILT, message, { hint }) });
}

async function fileStats(file: string): Promise<{ size: number } | undefined> {
  const stats = await stat(file).catch(() => undefined);
  return stats?.isFile() ? stats : undefined;
}

function decodePath(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
}

function notFound(pathname: string): ApiError {
  return new ApiError(errorInfo(ErrorCode.HTTP_NOT_FOUND, `no file ${JSON.stringify(pathname.slice(0, 200))}`));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
