// The documentation's pages (README.md and docs/*.md) as the doc tests read them: their sections
// by heading, their fenced code blocks, their links and the anchors GitHub gives their headings.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every page of the documentation, as paths from the root: README.md, then docs/*.md. */
export function docPages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

/** A page's text, by its path from the root. */
export function readPage(page: string): string {
  return readFileSync(path.join(ROOT, page), 'utf8');
}

/** A fenced code block: its language ('' for a bare fence), its text and the line its fence opens on. */
export interface CodeBlock {
  readonly lang: string;
  readonly code: string;
  readonly line: number;
}

/** The fenced code blocks of `markdown`, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] ?? '',
    code: m[2] ?? '',
    line: markdown.slice(0, m.index).split('\n').length,
  }));
}

/** `markdown` with its fenced code blocks blanked out (line count kept), so nothing in them reads as a link or a heading. */
export function withoutCode(markdown: string): string {
  return markdown.replace(/^```\w*\n[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** The section of `page` under the heading `heading` (e.g. '## Agent definitions'), up to the next heading of its level or above. */
export function section(page: string, heading: string): string {
  const text = readPage(page);
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${page} has no heading "${heading}"`);
  const level = heading.indexOf(' ');
  const rest = text.slice(start + 1 + heading.length);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  return heading + (end < 0 ? rest : rest.slice(0, end + 1));
}

/** The anchor GitHub gives a heading's text: lower case, punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of `markdown`'s headings, a repeated one numbered as GitHub numbers it (`-1`, `-2`). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const m of withoutCode(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The Markdown links and images of `markdown` outside code: `[text](target)` and `![alt](src)`. */
export function links(markdown: string): { text: string; target: string; line: number }[] {
  const text = withoutCode(markdown);
  return [...text.matchAll(/!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({
    text: m[1] ?? '',
    target: m[2] ?? '',
    line: text.slice(0, m.index).split('\n').length,
  }));
}

/** The source file of each entry point of the package ('redflow', 'redflow/nats', …), read off package.json's `exports`. */
export function entrySources(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  const sources: Record<string, string> = {};
  for (const [key, value] of Object.entries(pkg.exports)) {
    const types = (value as { types?: unknown }).types;
    if (typeof types !== 'string') continue;
    sources[key === '.' ? 'redflow' : `redflow/${key.slice(2)}`] = path.join(ROOT, types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'));
  }
  return sources;
}

/** `code` with its imports of the package ('redflow', 'redflow/nats', …) pointed at the source files, so it runs without a build. */
export function fromSource(code: string): string {
  const sources = entrySources();
  return code.replace(/from '(redflow(?:\/[\w-]+)?)'/g, (whole, specifier: string) => (sources[specifier] ? `from ${JSON.stringify(sources[specifier])}` : whole));
}

/** The file name a TypeScript block gives itself on its first line (`// order-desk.ts`), if any. */
export function fileNameOf(block: CodeBlock): string | undefined {
  return /^\/\/ ([\w.-]+\.m?ts)\b/.exec(block.code)?.[1];
}

/**
 * The output a block is shown to print: the bare fenced block right after it (nothing but blank
 * lines between), if any.
 */
export function shownOutput(markdown: string, block: CodeBlock, blocks: readonly CodeBlock[]): string | undefined {
  const next = blocks[blocks.indexOf(block) + 1];
  if (next === undefined || next.lang !== '') return undefined;
  const lines = markdown.split('\n');
  const end = block.line + block.code.split('\n').length; // the line of the block's closing fence
  const between = lines.slice(end, next.line - 1);
  return between.every((line) => line.trim() === '') ? next.code : undefined;
}

/** The `npx redflow …` lines of a shell block, in order. */
export function redflowLines(code: string): string[] {
  return code.split('\n').filter((line) => line.startsWith('npx redflow '));
}

/** The arguments of a page's `npx redflow …` line (a trailing ` &` aside): quoted parts ("…" or '…') are one argument each. */
export function redflowArgs(command: string): string[] {
  const words = command.replace(/ &$/, '').slice('npx redflow '.length).matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g);
  return [...words].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}
