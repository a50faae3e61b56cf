import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderOf, sourceFiles, sourceImports } from '../support/importGraph.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = path.join(root, 'src');
const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
const section = doc.slice(doc.indexOf('## The house'));

/** The folders of the house as docs/architecture.md lists them, highest first. */
const layers = [...section.matchAll(/^\| `([\w.]+)` \|/gm)].map(([, folder]) => folder as string);
/** The arrows of the house's picture, `a --> b`. */
const arrows = [...(/```mermaid\n([\s\S]*?)```/.exec(section)?.[1] ?? '').matchAll(/^\s*(\w+) --> (\w+)/gm)].map(([, a = '', b = '']) => [a, b] as const);
const imports = sourceImports(src);
const folderEdges = new Set(imports.map(({ from, to }) => `${folderOf(from)} -> ${folderOf(to)}`).filter((edge) => !/^(\S+) -> \1$/.test(edge)));

describe('the house (docs/architecture.md)', () => {
  it('should list every folder of src/, each once', () => {
    const folders = new Set(sourceFiles(src).map(folderOf));
    expect([...new Set(layers)].sort()).toEqual([...folders].sort());
    expect(layers.length).toBe(new Set(layers).size);
  });

  it('should have every folder import only folders listed below it', () => {
    const upward = imports
      .filter(({ from, to }) => layers.indexOf(folderOf(to)) <= layers.indexOf(folderOf(from)) && folderOf(to) !== folderOf(from))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(upward).toEqual([]);
  });

  it('should have no two files that import each other, or any longer circle of files', () => {
    const next = new Map<string, string[]>();
    for (const { from, to } of imports) next.set(from, [...(next.get(from) ?? []), to]);
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') return void circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
      state.set(file, 'open');
      for (const to of next.get(file) ?? []) visit(to, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of next.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('should draw only imports that exist, and reach through its arrows every import that does', () => {
    expect(arrows.length).toBeGreaterThan(10);
    expect(arrows.map(([a, b]) => `${a} -> ${b}`).filter((edge) => !folderEdges.has(edge))).toEqual([]);
    const reach = (from: string, to: string, seen = new Set<string>()): boolean =>
      arrows.some(([a, b]) => a === from && !seen.has(b) && (b === to || reach(b, to, seen.add(b))));
    const unreached = [...folderEdges].filter((edge) => {
      const [from = '', to = ''] = edge.split(' -> ');
      return !reach(from, to);
    });
    expect(unreached).toEqual([]);
  });

  it('should keep @nats-io in the NATS wing', () => {
    const outside = sourceFiles(src).filter((file) => folderOf(file) !== 'nats' && /from '@nats-io\//.test(readFileSync(path.join(src, file), 'utf8')));
    expect(outside).toEqual([]);
  });
});
