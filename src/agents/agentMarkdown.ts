import type { Heading, List, Nodes, Root, RootContent, Yaml } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { frontmatter } from 'micromark-extension-frontmatter';
import { LineCounter, isMap, isScalar, parseDocument } from 'yaml';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ReactCycle, ReactCycleAction } from './reactCycle.js';

// Loaded only through `await import()` (by loadAgentMarkdown): the Markdown and YAML readers stay
// off the path of `import 'redflow'`.

/** The keys an `.agent.md` front matter may have: one table, read by the parser and the docs. */
export const FRONT_MATTER_KEYS = ['name', 'description', 'model', 'tools', 'limits', 'inputs', 'query', 'outputSchema', 'subagents', 'verification'] as const;
export type FrontMatterKey = (typeof FRONT_MATTER_KEYS)[number];

/** The REACT_CYCLE subsections, by heading, and where each goes in a {@link ReactCycle}. */
const CYCLE_SECTIONS: Readonly<Record<string, keyof ReactCycle>> = {
  'typical thoughts': 'typicalThoughts',
  'specific actions': 'actions',
  'done criteria': 'doneCriteria',
  'escalation triggers': 'escalationTriggers',
};

/** `- \`name\`: description` */
const ACTION_ITEM = /^`([^`]+)`\s*:\s*(.+)$/s;

/** An `.agent.md` file read: its front matter with the line of each key, its prompt and its cycle. */
export interface ParsedAgentMarkdown {
  readonly frontMatter: Readonly<Partial<Record<FrontMatterKey, unknown>>>;
  /** The file's line of each front-matter key (1-based). */
  readonly keyLines: Readonly<Partial<Record<FrontMatterKey, number>>>;
  /** The line of each item of a list-valued key (`tools`, `subagents`), in order. */
  readonly itemLines: Readonly<Partial<Record<FrontMatterKey, readonly number[]>>>;
  /** The body without its REACT_CYCLE section: the agent's system prompt. */
  readonly systemPrompt: string;
  /** The line the body starts on. */
  readonly bodyLine: number;
  readonly reactCycle?: ReactCycle;
  /** The line of each REACT_CYCLE action, in order. */
  readonly actionLines: readonly number[];
}

/** The error of an `.agent.md` file at `line`, with `hint` saying how to fix it. */
export function markdownError(shownAs: string, line: number, message: string, hint: string, code: ErrorCode = ErrorCode.AGENT_MARKDOWN_INVALID): RedflowError {
  return new RedflowError(errorInfo(code, `${shownAs}:${line}: ${message}`, { hint, path: `${shownAs}:${line}` }));
}

/** The closest of `candidates` to `word` when it is a likely typo (at most 2 edits), for a "did you mean". */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

function lineOf(node: Nodes): number {
  return node.position?.start.line ?? 1;
}

/** The node's text as written in the file. */
function sourceOf(text: string, node: Nodes): string {
  return text.slice(node.position?.start.offset ?? 0, node.position?.end.offset ?? 0).trim();
}

function readFrontMatter(yamlNode: Yaml, shownAs: string) {
  const counter = new LineCounter();
  const document = parseDocument(yamlNode.value, { lineCounter: counter, prettyErrors: false });
  // The YAML starts on the line after the opening `---`.
  const fileLine = (offset: number) => lineOf(yamlNode) + counter.linePos(offset).line;
  const [error] = document.errors;
  if (error !== undefined) {
    throw markdownError(shownAs, fileLine(error.pos[0]), `the front matter is not valid YAML: ${error.message.split('\n')[0]}`, 'fix the YAML between the two --- lines');
  }
  if (!isMap(document.contents)) {
    throw markdownError(shownAs, lineOf(yamlNode), 'the front matter must be a YAML mapping of keys (name: …, description: …)', `use the keys ${FRONT_MATTER_KEYS.join(', ')}`);
  }
  const keyLines: Partial<Record<FrontMatterKey, number>> = {};
  const itemLines: Partial<Record<FrontMatterKey, number[]>> = {};
  for (const pair of document.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const line = isScalar(pair.key) && pair.key.range ? fileLine(pair.key.range[0]) : lineOf(yamlNode);
    if (!(FRONT_MATTER_KEYS as readonly string[]).includes(key)) {
      const guess = closest(key, FRONT_MATTER_KEYS);
      throw markdownError(shownAs, line, `unknown front-matter key "${key}"${guess ? ` (did you mean "${guess}"?)` : ''}`, `the keys are ${FRONT_MATTER_KEYS.join(', ')}`);
    }
    keyLines[key as FrontMatterKey] = line;
    const value = pair.value as { items?: { range?: [number, number, number] }[] } | null;
    if (Array.isArray(value?.items)) itemLines[key as FrontMatterKey] = value.items.map((item) => (item.range ? fileLine(item.range[0]) : line));
  }
  return { frontMatter: document.toJS() as Record<string, unknown>, keyLines, itemLines };
}

/** The text of each item of the lists in `nodes`. */
function listItems(text: string, nodes: readonly RootContent[]): { text: string; line: number }[] {
  return nodes
    .filter((node): node is List => node.type === 'list')
    .flatMap((list) => list.children.map((item) => ({ text: item.children.map((child) => sourceOf(text, child)).join('\n'), line: lineOf(item) })));
}

function readCycle(text: string, nodes: readonly RootContent[], shownAs: string): { cycle: ReactCycle; actionLines: number[] } {
  const cycle: Record<keyof ReactCycle, unknown[]> = { typicalThoughts: [], actions: [], doneCriteria: [], escalationTriggers: [] };
  const actionLines: number[] = [];
  const headings = nodes.map((node, i) => [node, i] as const).filter(([node]) => node.type === 'heading' && node.depth === 3);
  headings.forEach(([heading, at], n) => {
    const title = sourceOf(text, heading).replace(/^#+\s*/, '');
    const field = CYCLE_SECTIONS[title.toLowerCase()];
    if (field === undefined) {
      const names = ['Typical Thoughts', 'Specific Actions', 'Done Criteria', 'Escalation Triggers'];
      const guess = closest(title, names);
      throw markdownError(shownAs, lineOf(heading), `unknown REACT_CYCLE section "${title}"${guess ? ` (did you mean "${guess}"?)` : ''}`, `the sections are ${names.map((name) => `### ${name}`).join(', ')}`);
    }
    const next = headings[n + 1]?.[1] ?? nodes.length;
    for (const item of listItems(text, nodes.slice(at + 1, next))) {
      if (field !== 'actions') {
        cycle[field].push(item.text);
        continue;
      }
      const match = ACTION_ITEM.exec(item.text);
      if (match === null) {
        throw markdownError(shownAs, item.line, `a Specific Actions item must read "\`tool_name\`: what it is for", got "${item.text.slice(0, 60)}"`, 'name the tool in backticks, then a colon and its description');
      }
      cycle.actions.push({ name: (match[1] as string).trim(), description: (match[2] as string).trim() } satisfies ReactCycleAction);
      actionLines.push(item.line);
    }
  });
  return { cycle: cycle as unknown as ReactCycle, actionLines };
}

/**
 * Reads an `.agent.md` file's text: its YAML front matter (each key's line kept, unknown keys
 * refused), its body as the system prompt, and its `## REACT_CYCLE` section's subsections as a
 * {@link ReactCycle}. Checks the file's form only; what the values mean is the loader's.
 *
 * @throws RedflowError `AGENT_MARKDOWN_INVALID` with the file's line: no front matter, YAML that
 *   does not parse, an unknown key or REACT_CYCLE section, an action item not of the form
 *   "`name`: description", an empty prompt.
 * @example
 * ```ts
 * const parsed = parseAgentMarkdown(await readFile('audit.agent.md', 'utf8'), 'audit.agent.md');
 * ```
 */
export function parseAgentMarkdown(text: string, shownAs: string): ParsedAgentMarkdown {
  const tree: Root = fromMarkdown(text, { extensions: [frontmatter(['yaml'])], mdastExtensions: [frontmatterFromMarkdown(['yaml'])] });
  const [first] = tree.children;
  if (first?.type !== 'yaml') {
    throw markdownError(shownAs, 1, 'the file has no YAML front matter', 'start the file with a --- line, the keys (name, description, model, …), and another --- line');
  }
  const { frontMatter, keyLines, itemLines } = readFrontMatter(first, shownAs);
  const body = tree.children.slice(1);
  const cycleAt = body.findIndex((node) => node.type === 'heading' && node.depth === 2 && sourceOf(text, node).replace(/^#+\s*/, '') === 'REACT_CYCLE');
  let prompt = body;
  let reactCycle: { cycle: ReactCycle; actionLines: number[] } | undefined;
  if (cycleAt >= 0) {
    const after = body.findIndex((node, i) => i > cycleAt && node.type === 'heading' && (node as Heading).depth <= 2);
    const end = after < 0 ? body.length : after;
    reactCycle = readCycle(text, body.slice(cycleAt + 1, end), shownAs);
    prompt = [...body.slice(0, cycleAt), ...body.slice(end)];
  }
  const systemPrompt = prompt.map((node) => sourceOf(text, node)).join('\n\n');
  const bodyLine = body[0] === undefined ? lineOf(first) : lineOf(body[0]);
  if (systemPrompt.trim() === '') {
    throw markdownError(shownAs, bodyLine, 'the body is empty: it is the agent\'s system prompt', 'write what the agent is for and how it works below the front matter');
  }
  return {
    frontMatter,
    keyLines,
    itemLines,
    systemPrompt,
    bodyLine,
    ...(reactCycle !== undefined && { reactCycle: reactCycle.cycle }),
    actionLines: reactCycle?.actionLines ?? [],
  };
}
