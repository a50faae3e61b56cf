import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
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

  it('should compile no code in the browser (a CSP without unsafe-eval holds): the config validators are precompiled', () => {
    const scripts = readdirSync(path.join(dist, 'assets')).filter((file) => file.endsWith('.js'));
    for (const file of scripts) {
      const code = readFileSync(path.join(dist, 'assets', file), 'utf8');
      expect(code, file).not.toMatch(/\bFunction\(|\beval\(/);
    }
  });

  it('should load a small entry first, the libraries in chunks beside it, and the Stately inspector only when asked for', () => {
    const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
    const loaded = [...html.matchAll(/(?:src|href)="\.\/assets\/([^"]+\.js)"/g)].map((match) => match[1] as string);
    const entry = /<script type="module"[^>]*src="\.\/assets\/([^"]+)"/.exec(html)?.[1] ?? '';
    // 774 kB in one chunk before the split and the precompiled validators; 221 kB after.
    expect(statSync(path.join(dist, 'assets', entry)).size).toBeLessThan(300_000);
    for (const library of ['react', 'xyflow', 'xstate']) expect(loaded.some((file) => file.startsWith(`${library}-`)), library).toBe(true);
    const inspector = readdirSync(path.join(dist, 'assets')).find((file) => file.startsWith('openInInspector-'));
    expect(inspector).toBeDefined();
    expect(loaded).not.toContain(inspector);
  });
});
