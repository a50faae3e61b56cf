// Every image the documentation shows (README.md and docs/*.md) is in the repository (docs/images/,
// made by `npm run docs:screenshots`), is a real PNG, and says what it shows; and no image there is
// left unused.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, docPages, readPage } from './docPages.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A page's images: Markdown `![alt](src)` and HTML `<img src="…">`. */
function images(markdown: string): { alt: string; src: string }[] {
  const found = [...markdown.matchAll(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({ alt: m[1] ?? '', src: m[2] ?? '' }));
  for (const m of markdown.matchAll(/<img\s[^>]*src="([^"]+)"[^>]*>/g)) found.push({ alt: /alt="([^"]*)"/.exec(m[0])?.[1] ?? '', src: m[1] ?? '' });
  return found;
}

/** Every image the documentation shows, its path from the repository's root. */
const shown = docPages().flatMap((page) => images(readPage(page)).map(({ alt, src }) => ({ alt, src, page, file: /^[a-z]+:/i.test(src) ? src : path.join(path.dirname(page), decodeURIComponent(src)) })));

describe('the images of the documentation', () => {
  it('should show the debugging screenshots', () => {
    const onPage = (page: string) => shown.filter((image) => image.page === page).map((image) => image.file);
    expect(onPage('README.md')).toEqual(['docs/images/editor-step-details.png']);
    expect(onPage('docs/event-log.md')).toEqual(expect.arrayContaining(['docs/images/editor-step-details.png', 'docs/images/editor-failed-tool.png']));
  });

  it('should link only images that are in the repository, as PNG files, each with a description', () => {
    for (const { alt, src, page, file: relative } of shown) {
      expect(src, `${page}: an image of the repository, not of the web`).not.toMatch(/^[a-z]+:/i);
      const file = path.join(ROOT, relative);
      expect(existsSync(file), `${page}: ${src} is missing`).toBe(true);
      expect(readFileSync(file).subarray(0, 8).equals(PNG_SIGNATURE), `${src} is not a PNG`).toBe(true);
      expect(alt.length, `${src} has no description`).toBeGreaterThan(20);
    }
  });

  it('should leave no image in docs/images unused', () => {
    const linked = new Set(shown.map((image) => path.normalize(image.file)));
    const files = readdirSync(path.join(ROOT, 'docs/images')).map((name) => path.join('docs/images', name));
    expect(files.filter((file) => !linked.has(file))).toEqual([]);
  });
});
