import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.join(root, 'dist/editor');

describe('the editor’s production build (npm run build, run by pretest)', () => {
  it('should write dist/editor/index.html referencing built assets that exist, by relative URLs', () => {
    const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
    const assets = [...html.matchAll(/(?:src|href)="(\.\/assets\/[^"]+)"/g)].map((match) => match[1] as string);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true);
    for (const asset of assets) expect(existsSync(path.join(dist, asset)), asset).toBe(true);
    expect(html).not.toContain('main.tsx');
  });

  it('should bundle no Node module', () => {
    const scripts = readdirSync(path.join(dist, 'assets')).filter((file) => file.endsWith('.js'));
    for (const file of scripts) {
      const code = readFileSync(path.join(dist, 'assets', file), 'utf8');
      expect(code, file).not.toMatch(/from\s*["']node:|import\(\s*["']node:|require\(\s*["']node:/);
      expect(code, file).not.toContain('createRequire');
    }
  });
});
