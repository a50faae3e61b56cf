import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exitCodes.js';
import { AgentEventType } from '../../src/events/eventTypes.js';
import { reactMachine } from '../../src/machines/reactMachine.js';
import { ReactState, ReactStateGroup } from '../../src/machines/reactState.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFile(path.join(root, file), 'utf8');

/** A transition of the machine's definition, as `source --> target`. */
interface Transition {
  readonly source: string;
  readonly target: string;
  readonly guard?: string;
}

type RawState = { readonly always?: unknown; readonly on?: Record<string, unknown>; readonly states?: Record<string, RawState> };

/** Every state of the machine, parent states included, with the parent state it is in (undefined at the root). */
function machineStates(): { readonly name: string; readonly node: RawState; readonly parent?: string }[] {
  const walk = (states: Record<string, RawState>, parent?: string): ReturnType<typeof machineStates> =>
    Object.entries(states).flatMap(([name, node]) => [{ name, node, ...(parent && { parent }) }, ...walk(node.states ?? {}, name)]);
  return walk((reactMachine.config.states ?? {}) as Record<string, RawState>);
}

/** Every targeted transition of each state, nested ones included (the root's abort and timeout are described apart). */
function machineTransitions(): Transition[] {
  type Candidate = { readonly target?: string | readonly string[]; readonly guard?: unknown };
  const asList = (value: unknown): Candidate[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]) as Candidate[];
  const guardName = (guard: unknown): string | undefined =>
    typeof guard === 'string' ? guard : typeof guard === 'object' && guard !== null ? String((guard as { type: unknown }).type) : undefined;
  const transitions: Transition[] = [];
  for (const { name: source, node } of machineStates()) {
    const candidates = [...asList(node.always), ...Object.values(node.on ?? {}).flatMap(asList)];
    for (const candidate of candidates) {
      if (candidate.target === undefined) continue;
      const guard = guardName(candidate.guard);
      // A target names the state by its path (`#react.ending.concluding`); the diagram by its name.
      for (const target of asList(candidate.target) as unknown as string[]) transitions.push({ source, target: target.split('.').at(-1) as string, ...(guard && { guard }) });
    }
  }
  return transitions;
}

/** Files under `dir` (relative to the repository) whose name ends with one of `endings`. */
async function filesUnder(dir: string, endings: readonly string[]): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && endings.some((ending) => entry.name.endsWith(ending)))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

describe('docs/architecture.md', () => {
  it('should draw every transition of the statechart, and no other', async () => {
    const doc = await read('docs/architecture.md');
    const diagram = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const drawn = new Set(
      [...diagram.matchAll(/^\s*(\w+) --> (\w+)/gm)].map(([, source, target]) => `${source} --> ${target}`),
    );
    const defined = new Set(machineTransitions().map(({ source, target }) => `${source} --> ${target}`));
    expect([...drawn].sort()).toEqual([...defined].sort());
  });

  it('should draw the parent states around the states the machine puts in them', async () => {
    const doc = await read('docs/architecture.md');
    const diagram = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const drawn = [...diagram.matchAll(/^\s*state (\w+) \{\n([\s\S]*?)^\s*\}/gm)].flatMap(([, parent, body]) =>
      [...(body as string).matchAll(/^\s*(\w+)\s*$/gm)].map(([, child]) => `${parent} > ${child}`),
    );
    const defined = machineStates().flatMap(({ name, parent }) => (parent ? [`${parent} > ${name}`] : []));
    expect(defined.length).toBeGreaterThan(0);
    expect(drawn.sort()).toEqual(defined.sort());
  });

  it('should describe every state, guard, resume point, event type and outcome reason', async () => {
    const doc = await read('docs/architecture.md');
    const envelopeSchema = JSON.parse(await read('schemas/envelope.schema.json')) as {
      definitions: { RunOutcome: { properties: { status: { enum: string[] }; reason: { enum: string[] } } } };
    };
    const transitions = machineTransitions();
    const named = [
      ...Object.values(ReactState),
      ...Object.values(ReactStateGroup),
      ...new Set(transitions.flatMap((t) => (t.guard ? [t.guard] : []))),
      ...Object.values(AgentEventType),
      ...envelopeSchema.definitions.RunOutcome.properties.reason.enum,
      ...envelopeSchema.definitions.RunOutcome.properties.status.enum,
    ];
    const resumePoints = (reactMachine.config.states?.[ReactState.Starting]?.always as { guard?: { params?: { at?: string } } }[]).flatMap(
      (candidate) => (candidate.guard?.params?.at ? [candidate.guard.params.at] : []),
    );
    expect(resumePoints.length).toBeGreaterThan(0);
    const missing = [...named, ...resumePoints].filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('should point only at files that exist', async () => {
    const doc = await read('docs/architecture.md');
    const paths = [...doc.matchAll(/`((?:src|test|schemas|deploy|examples)\/[\w./-]+)`/g)].map(([, file]) => file as string);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
  });
});

describe('the repository', () => {
  it('should cite no design document that is not in it', async () => {
    // Built from parts, so that this file does not cite them itself.
    const cited = new RegExp(['DESIGN' + '\\.md', 'DESIGN' + ' invariant', '\\.\\./' + 'shared/', '\\bseed[ -]?' + '0\\d\\d\\b'].join('|'), 'i');
    const files = [
      'README.md',
      'eslint.config.js',
      ...(await filesUnder('docs', ['.md'])),
      ...(await filesUnder('schemas', ['.json'])),
      ...(await filesUnder('src', ['.ts', '.tsx'])),
      ...(await filesUnder('test', ['.ts', '.tsx', '.json'])),
    ];
    const citing: string[] = [];
    for (const file of files) {
      const lines = (await read(file)).split('\n');
      lines.forEach((line, i) => {
        if (cited.test(line)) citing.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(citing).toEqual([]);
  });

  it('should list every exit code of the redflow command in docs/cli.md', async () => {
    const readme = await read('docs/cli.md');
    const start = readme.indexOf('| code | meaning |', readme.indexOf('Exit codes:'));
    const table = readme.slice(start, readme.indexOf('\n\n', start));
    const listed = [...table.matchAll(/^\| (\d+) \|/gm)].map(([, code]) => Number(code));
    expect([...new Set(listed)].sort((a, b) => a - b)).toEqual([...new Set(Object.values(ExitCode))].sort((a, b) => a - b));
  });

  it('should link docs/architecture.md from the README, before its first section', async () => {
    const readme = await read('README.md');
    const firstSection = readme.indexOf('\n## ');
    expect(readme.indexOf('(docs/architecture.md)')).toBeGreaterThan(-1);
    expect(readme.indexOf('(docs/architecture.md)')).toBeLessThan(firstSection);
  });
});
