import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The order of the pure core's folders: `events` (the log: event types, the fold, the stores, the
 * event-order table) sits below `machines` (the statechart and its protocol), which sits below
 * `actors`. A lower folder never imports a higher one, and no two files import each other.
 */
const src = path.resolve(import.meta.dirname, '../../src');

/** The files of a folder (not its subfolders) and the src-relative files each imports. */
function importsOf(folder: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const name of readdirSync(path.join(src, folder)).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(path.join(src, folder, name), 'utf8');
    const targets = [...text.matchAll(/(?:import|export)[^'";]*?from\s+'(\.[^']+)'/g)].map((m) => path.relative(src, path.resolve(src, folder, m[1] as string)).replace(/\.js$/, '.ts'));
    found.set(`${folder}/${name}`, targets);
  }
  return found;
}

const events = importsOf('events');
const machines = importsOf('machines');

describe('the core folders import downward only', () => {
  it('should find the files to check', () => {
    expect(events.has('events/evolve.ts') && machines.has('machines/reactMachine.ts')).toBe(true);
  });

  it('should import neither src/machines nor src/actors from src/events', () => {
    const up = [...events].flatMap(([file, targets]) => targets.filter((t) => /^(machines|actors)\//.test(t)).map((t) => `${file} -> ${t}`));
    expect(up).toEqual([]);
  });

  it('should import nothing from src/actors in src/machines', () => {
    const up = [...machines].flatMap(([file, targets]) => targets.filter((t) => t.startsWith('actors/')).map((t) => `${file} -> ${t}`));
    expect(up).toEqual([]);
  });

  it('should have no two files of src/events and src/machines import each other', () => {
    const all = new Map([...events, ...machines]);
    const mutual = [...all].flatMap(([file, targets]) => targets.filter((t) => file < t && all.get(t)?.includes(file)).map((t) => `${file} <-> ${t}`));
    expect(mutual).toEqual([]);
  });
});
