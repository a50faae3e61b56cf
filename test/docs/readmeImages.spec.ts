// Every image the README shows is in the repository (docs/images/, made by `npm run docs:screenshots`),
// is a real PNG, and says what it shows; and no image there is left unused.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The README's images: Markdown `![alt](src)` and HTML `<img src="…">`. */
function images(markdown: string): { alt: string; src: string }[] {
  const found = [...markdown.matchAll(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({ alt: m[1] ?? '', src: m[2] ?? '' }));
  for (const m of markdown.matchAll(/<img\s[^>]*src="([^"]+)"[^>]*>/g)) found.push({ alt: /alt="([^"]*)"/.exec(m[0])?.[1] ?? '', src: m[1] ?? '' });
  return found;
}

describe('the README’s images', () => {
  const shown = images(README);

  it('should show the debugging screenshots', () => {
    expect(shown.map((image) => image.src)).toEqual(expect.arrayContaining(['docs/images/editor-step-details.png', 'docs/images/editor-failed-tool.png']));
  });

  it('should link only images that are in the repository, as PNG files, each with a description', () => {
    for (const { alt, src } of shown) {
      expect(src, 'an image of the repository, not of the web').not.toMatch(/^[a-z]+:/i);
      const file = path.join(ROOT, decodeURIComponent(src));
      expect(existsSync(file), `${src} is missing`).toBe(true);
      expect(readFileSync(file).subarray(0, 8).equals(PNG_SIGNATURE), `${src} is not a PNG`).toBe(true);
      expect(alt.length, `${src} has no description`).toBeGreaterThan(20);
    }
  });

  it('should leave no image in docs/images unused', () => {
    const linked = new Set(shown.map((image) => path.normalize(image.src)));
    const files = readdirSync(path.join(ROOT, 'docs/images')).map((name) => path.join('docs/images', name));
    expect(files.filter((file) => !linked.has(file))).toEqual([]);
  });
});
