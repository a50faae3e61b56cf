// The check on the files a flow names, against a real tree with links pointing in, out, up and
// nowhere: whatever the reference (relative, absolute, `..`, links, URLs, backslashes), it is
// refused or it resolves to a canonical path inside the root.
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFlowFile } from '../../src/files/fileRoots.js';

let top: string;
let root: string;
let realRoot: string;

beforeAll(async () => {
  top = await mkdtemp(path.join(os.tmpdir(), 'redflow-roots-'));
  root = path.join(top, 'root');
  await mkdir(path.join(root, 'a', 'b'), { recursive: true });
  await mkdir(path.join(top, 'outside', 'sub'), { recursive: true });
  // A sibling whose name starts like the root's: inside by string prefix, outside in fact.
  await mkdir(path.join(top, 'rootx'), { recursive: true });
  await writeFile(path.join(root, 'file.mjs'), '');
  await writeFile(path.join(root, 'a', 'inner.mjs'), '');
  await writeFile(path.join(top, 'outside', 'evil.mjs'), '');
  await symlink(path.join(root, 'a'), path.join(root, 'link-in'));
  await symlink(path.join(top, 'outside'), path.join(root, 'link-out'));
  await symlink('..', path.join(root, 'link-up'));
  await symlink(path.join(top, 'outside', 'evil.mjs'), path.join(root, 'a', 'file-out.mjs'));
  await symlink(path.join(top, 'nowhere'), path.join(root, 'dangling'));
  realRoot = await realpath(root);
});
afterAll(() => rm(top, { recursive: true, force: true }));

const LINKS = ['link-in', 'link-out', 'link-up', 'file-out.mjs', 'dangling'];
const segment = fc.constantFrom('..', '.', '', 'a', 'b', 'new', 'file.mjs', 'inner.mjs', 'evil.mjs', 'outside', 'sub', 'root', 'rootx', ...LINKS);

/** A reference as a flow might hold it: a start (none, `./`, an absolute folder, a URL scheme) and segments. */
const reference = fc
  .record({
    start: fc.constantFrom('', './', 'TOP/', 'ROOT/', 'OUT/', 'file://ROOT/', 'data:text/javascript,', 'node:', 'C:/'),
    segments: fc.array(segment, { maxLength: 6 }),
    separator: fc.constantFrom('/', '/', '/', '\\'),
  })
  .map(({ start, segments, separator }) =>
    (start + segments.join(separator))
      .replace('TOP/', `${top}/`)
      .replace('ROOT/', `${root}/`)
      .replace('OUT/', `${path.join(top, 'outside')}/`),
  );

/** The real path of `file` by the system's own resolution of its nearest existing ancestor, with the rest appended. */
function systemRealPath(file: string): string {
  let probe = file;
  const rest: string[] = [];
  while (!existsSync(probe)) {
    rest.unshift(path.basename(probe));
    probe = path.dirname(probe);
  }
  return path.join(realpathSync.native(probe), ...rest);
}

describe('resolveFlowFile', () => {
  it('should refuse a reference or resolve it to a canonical path inside the root, whatever the reference', async () => {
    await fc.assert(
      fc.asyncProperty(reference, fc.constantFrom('', 'a'), async (ref, from) => {
        const baseDir = path.join(root, from);
        const resolved = await resolveFlowFile(ref, { baseDir, roots: [root] });
        // A refusal does not show where the files are.
        expect(resolved.ok ? '' : resolved.why).not.toContain(top);
        if (!resolved.ok) return;
        // What was accepted is where the system would put it, and that is inside the root.
        expect(resolved.file).toBe(systemRealPath(resolved.file));
        expect(resolved.file === realRoot || resolved.file.startsWith(`${realRoot}${path.sep}`)).toBe(true);
        // Nothing that is not a plain path gets through.
        expect(ref).not.toMatch(/\\|^[A-Za-z][A-Za-z0-9+.-]+:/);
      }),
      { numRuns: 2000 },
    );
  });

  it('should accept exactly the plain paths that stay inside the root, when no link is on the way', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('..', '.', 'a', 'b', 'new', 'file.mjs', 'root', 'rootx', 'outside'), { maxLength: 6 }),
        fc.constantFrom('', 'a'),
        async (segments, from) => {
          const ref = segments.join('/') || '.';
          const baseDir = path.join(root, from);
          const lexical = path.resolve(baseDir, ref);
          // Below a file there is nothing: the system answers differently from the lexical path there.
          fc.pre(!path.relative(root, lexical).split(path.sep).slice(0, -1).includes('file.mjs'));
          const inside = lexical === root || lexical.startsWith(`${root}${path.sep}`);
          const resolved = await resolveFlowFile(ref, { baseDir, roots: [root] });
          expect(resolved.ok).toBe(inside);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['a sibling folder sharing the root name as a prefix', '../rootx/x.mjs'],
    ['a link to a file outside', 'a/file-out.mjs'],
    ['a folder link out', 'link-out/evil.mjs'],
    ['a link up, then into a sibling', 'link-up/outside/evil.mjs'],
    ['a file under a dangling link', 'dangling/x.mjs'],
    ['a file: URL of a file inside', 'file://ROOT/file.mjs'],
    ['Windows separators', 'a\\inner.mjs'],
  ])('should refuse %s', async (_name, ref) => {
    const resolved = await resolveFlowFile(ref.replace('ROOT', root), { baseDir: root, roots: [root] });
    expect(resolved.ok).toBe(false);
  });

  it('should accept a link up that leads back into the root, as the file it reaches', async () => {
    const resolved = await resolveFlowFile('link-up/root/file.mjs', { baseDir: root, roots: [root] });
    expect(resolved).toEqual({ ok: true, file: path.join(realRoot, 'file.mjs') });
  });

  it('should accept a link that stays inside, as its target', async () => {
    const resolved = await resolveFlowFile('link-in/inner.mjs', { baseDir: root, roots: [root] });
    expect(resolved).toEqual({ ok: true, file: path.join(realRoot, 'a', 'inner.mjs') });
  });
});
