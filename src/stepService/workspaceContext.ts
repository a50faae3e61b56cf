import { constants } from 'node:fs';
import { open, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { realPathInsideRoots } from '../files/fileRoots.js';
import type { ReactStepRequest, VectorSearchResult } from './reactStepTypes.js';

/** Where context files come from: the operator's workspace (`redflow serve --workspace <dir>`). */
export interface WorkspaceOptions {
  /** The workspace folder; without one, no file is read and the step says so in its notes. */
  readonly root?: string;
  /** Longest file put in a prompt, in bytes; longer ones are cut with a note (default 100 KB). */
  readonly maxFileBytes?: number;
}

/** Where pinned items live in the workspace: one file per id, named `<id>` or `<id>.<ext>`. */
export const PINS_FOLDER = '.redflow/pins';

/** How much a section matters: when the window is short, the least important go first. */
export const SectionKind = {
  explicit: 'explicit',
  pinned: 'pinned',
  implicit: 'implicit',
  vector: 'vector',
} as const;
/** One of {@link SectionKind}. */
export type SectionKind = (typeof SectionKind)[keyof typeof SectionKind];

/** One piece of context for the prompt: a file, a pinned item, a search result. */
export interface ContextSection {
  readonly kind: SectionKind;
  /** What it is, as the prompt shows it: `file src/auth.js`. */
  readonly title: string;
  readonly text: string;
}

/** The context of a step: the sections found, and a note for each one left out and why. */
export interface StepContext {
  readonly sections: readonly ContextSection[];
  readonly notes: readonly string[];
}

const DEFAULT_MAX_FILE_BYTES = 100_000;
const MAX_FOLDER_ENTRIES = 200;

/**
 * Gathers a step's context: the files the user tagged (a folder gives its listing), pinned items,
 * the last focused file, and the search results the client sent. Files are read only inside the
 * workspace, symbolic links followed and checked again on the open file; anything missing,
 * outside, binary or unreadable is left out with a note (the prompt then says what is missing),
 * never with an error: a step still answers with less context. Notes name files as the client
 * wrote them, never by their place on the server.
 *
 * @example
 * ```ts
 * const { sections, notes } = await gatherStepContext(request, { root: '/srv/workspace' });
 * ```
 */
export async function gatherStepContext(request: ReactStepRequest, options: WorkspaceOptions): Promise<StepContext> {
  const sections: ContextSection[] = [];
  const notes: string[] = [];
  const files: { readonly kind: SectionKind; readonly reference: string; readonly label: string }[] = [
    ...(request.explicit_context_paths ?? []).map((reference) => ({ kind: SectionKind.explicit, reference, label: reference })),
    ...(request.pinned_item_ids_to_include ?? []).map((id) => ({ kind: SectionKind.pinned, reference: id, label: `pinned item ${id}` })),
    ...(request.implicit_context?.last_focused_file_path !== undefined
      ? [{ kind: SectionKind.implicit, reference: request.implicit_context.last_focused_file_path, label: request.implicit_context.last_focused_file_path }]
      : []),
  ];
  if (files.length > 0 && options.root === undefined) {
    notes.push(`${files.length} file${files.length === 1 ? '' : 's'} left out: the server has no workspace to read files from`);
  } else if (options.root !== undefined) {
    const root = options.root;
    for (const file of files) {
      const found = file.kind === SectionKind.pinned ? await pinnedItem(root, file.reference) : await workspaceEntry(root, file.reference, options);
      if (typeof found === 'string') notes.push(`${file.label} left out: ${found}`);
      else sections.push({ kind: file.kind, title: found.folder ? `folder ${file.label}` : file.kind === SectionKind.pinned ? file.label : `file ${file.label}`, text: found.text });
      if (typeof found !== 'string' && found.cut) notes.push(`${file.label} cut to its first ${options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES} bytes`);
    }
  }
  (request.vector_search_results_to_include ?? []).forEach((result, index) => sections.push(vectorSection(result, index)));
  return { sections, notes };
}

function vectorSection(result: VectorSearchResult, index: number): ContextSection {
  if (typeof result === 'string') return { kind: SectionKind.vector, title: `search result ${index + 1}`, text: result };
  return { kind: SectionKind.vector, title: result.file_path !== undefined ? `search result from ${result.file_path}` : `search result ${index + 1}`, text: result.content };
}

interface Found {
  readonly text: string;
  readonly folder: boolean;
  readonly cut: boolean;
}

/** A workspace-relative path: the file's text, a folder's listing, or why it is left out. */
async function workspaceEntry(root: string, reference: string, options: WorkspaceOptions): Promise<Found | string> {
  const relative = reference.replace(/^@(?:file|folder):?/, '').trim();
  if (relative === '' || relative.includes('\0')) return 'not a path';
  if (path.isAbsolute(relative) || /^[A-Za-z]:[\\/]/.test(relative)) return 'paths are relative to the workspace';
  const inside = await realPathInsideRoots(path.resolve(root, relative), [root]);
  if (!inside.ok) return inside.why.includes('outside') ? 'outside the workspace' : 'not found';
  return readChecked(inside.file, root, options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
}

/** `<pins>/<id>`, or the first `<pins>/<id>.<ext>`. */
async function pinnedItem(root: string, id: string): Promise<Found | string> {
  const folder = path.join(root, PINS_FOLDER);
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return 'not found (the workspace has no pinned items)';
  }
  const name = names.includes(id) ? id : names.sort().find((entry) => entry.startsWith(`${id}.`));
  if (name === undefined) return 'not found';
  const inside = await realPathInsideRoots(path.join(folder, name), [root]);
  if (!inside.ok) return 'outside the workspace';
  return readChecked(inside.file, root, DEFAULT_MAX_FILE_BYTES);
}

/**
 * Reads what was checked. The open file is checked again where the system tells where an open
 * file is (/proc on Linux), so a link swapped in after the check still cannot lead outside.
 */
async function readChecked(file: string, root: string, maxBytes: number): Promise<Found | string> {
  let handle;
  try {
    // Non-blocking: opening a named pipe waits for a writer, holding one of libuv's few threads
    // (four such steps would stall every file read of the server); regular files read as ever.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : 'cannot be read';
  }
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => file);
    const still = await realPathInsideRoots(opened, [root]);
    if (!still.ok) return 'outside the workspace';
    const stat = await handle.stat();
    if (stat.isDirectory()) {
      const entries = await readdir(file, { withFileTypes: true });
      const listed = entries
        .filter((entry) => !entry.name.startsWith('.'))
        .slice(0, MAX_FOLDER_ENTRIES)
        .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        .sort();
      const more = entries.length > MAX_FOLDER_ENTRIES ? `\n… and ${entries.length - MAX_FOLDER_ENTRIES} more` : '';
      return { text: listed.join('\n') + more, folder: true, cut: false };
    }
    if (!stat.isFile()) return 'not a file';
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) return 'a binary file';
    return { text: new TextDecoder('utf-8').decode(bytes), folder: false, cut: stat.size > maxBytes };
  } catch {
    return 'cannot be read';
  } finally {
    await handle.close();
  }
}

/**
 * The sections as one block of prompt text, with the notes at its end so the model knows what it
 * was not shown.
 *
 * @example
 * ```ts
 * renderContext({ sections: [{ kind: 'explicit', title: 'file a.js', text: 'x()' }], notes: [] });
 * ```
 */
export function renderContext(context: StepContext): string | undefined {
  if (context.sections.length === 0 && context.notes.length === 0) return undefined;
  const parts = context.sections.map((section) => `### ${section.title}\n${section.text}`);
  if (context.notes.length > 0) parts.push(`### Not available\n${context.notes.map((note) => `- ${note}`).join('\n')}`);
  return `Context for this question:\n\n${parts.join('\n\n')}`;
}
