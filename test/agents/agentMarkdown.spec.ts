import { mkdtemp, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAgentMarkdown } from '../../src/agents/agentMarkdown.js';
import { loadAgentMarkdown } from '../../src/agents/agentMarkdownFile.js';
import { AgentRegistry } from '../../src/agents/agentRegistry.js';
import { RedflowError } from '../../src/errors.js';

const EXAMPLE = path.resolve('examples/security-audit');

const head = (extra = '') => `---
name: helper
description: Helps.
model: { provider: scripted, answers: [{ action: final, message: ok, confidence: 0.9 }] }
${extra}---
`;

/** A folder holding the example's tools and `files`. */
async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'agent-md-'));
  await cp(path.join(EXAMPLE, 'tools'), path.join(dir, 'tools'), { recursive: true });
  await cp(path.join(EXAMPLE, 'code'), path.join(dir, 'code'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

async function refusal(promise: Promise<unknown>): Promise<RedflowError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

describe('an .agent.md file read', () => {
  it('gives the front matter, the body without REACT_CYCLE as the prompt, and each cycle section', () => {
    const parsed = parseAgentMarkdown(
      `${head()}
You help.

## REACT_CYCLE

### Typical Thoughts
- What is asked?

### Specific Actions
- \`look\`: looks it up

### Done Criteria
- The answer cites a source

### Escalation Triggers
- The user is angry

## Style
Be brief.
`,
      'x.agent.md',
    );
    expect(parsed.frontMatter.name).toBe('helper');
    expect(parsed.keyLines).toMatchObject({ name: 2, description: 3, model: 4 });
    expect(parsed.systemPrompt).toBe('You help.\n\n## Style\n\nBe brief.');
    expect(parsed.reactCycle).toEqual({
      typicalThoughts: ['What is asked?'],
      actions: [{ name: 'look', description: 'looks it up' }],
      doneCriteria: ['The answer cites a source'],
      escalationTriggers: ['The user is angry'],
    });
    expect(parsed.actionLines).toEqual([15]);
  });

  it('refuses a file without front matter, at line 1', () => {
    expect(() => parseAgentMarkdown('# Just a prompt\n', 'x.agent.md')).toThrow(expect.objectContaining({ code: 'AGENT_MARKDOWN_INVALID', path: 'x.agent.md:1' }));
  });

  it('refuses an unknown front-matter key with its line and a did-you-mean', () => {
    const run = () => parseAgentMarkdown(`${head('tols: [./a.mjs]\n')}\nYou help.\n`, 'x.agent.md');
    expect(run).toThrow(expect.objectContaining({ code: 'AGENT_MARKDOWN_INVALID', path: 'x.agent.md:5' }));
    expect(run).toThrow(/unknown front-matter key "tols" \(did you mean "tools"\?\)/);
  });

  it('refuses a REACT_CYCLE section it does not know, and an action item without a tool name', () => {
    expect(() => parseAgentMarkdown(`${head()}\nYou help.\n\n## REACT_CYCLE\n\n### Done Criterias\n- x\n`, 'x.agent.md')).toThrow(/x\.agent\.md:11: unknown REACT_CYCLE section "Done Criterias" \(did you mean "Done Criteria"\?\)/);
    expect(() => parseAgentMarkdown(`${head()}\nYou help.\n\n## REACT_CYCLE\n\n### Specific Actions\n- look it up\n`, 'x.agent.md')).toThrow(expect.objectContaining({ path: 'x.agent.md:12' }));
  });

  it('reads any list of thoughts as written, one per item (property)', () => {
    const item = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.?]{0,40}[A-Za-z0-9?]$/);
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 6 }), (thoughts) => {
        const text = `${head()}\nYou help.\n\n## REACT_CYCLE\n\n### Typical Thoughts\n${thoughts.map((t) => `- ${t}`).join('\n')}\n`;
        expect(parseAgentMarkdown(text, 'x.agent.md').reactCycle?.typicalThoughts).toEqual(thoughts);
      }),
      { numRuns: 50 },
    );
  });
});

describe('an .agent.md file loaded', () => {
  it('becomes a definition with its tools, limits, output schema and REACT_CYCLE', async () => {
    const definition = await loadAgentMarkdown(path.join(EXAMPLE, 'security-audit.agent.md'));
    expect(definition.name).toBe('security-audit');
    expect(definition.toolConfig?.tools.map((tool) => tool.name)).toEqual(['analyze', 'search']);
    expect(definition.runConfig).toEqual({ maxTurns: 6, timeoutMs: 60000 });
    expect(definition.outputConfig?.outputName).toBe('result');
    expect(definition.promptConfig.reactCycle?.doneCriteria).toHaveLength(2);
    expect(definition.promptConfig.systemPrompt).not.toContain('REACT_CYCLE');
  });

  it('refuses a REACT_CYCLE action that names no tool of the agent, at its line', async () => {
    const dir = await folder({ 'a.agent.md': `${head('tools: [./tools/search.mjs]\n')}\nYou help.\n\n## REACT_CYCLE\n\n### Specific Actions\n- \`search\`: finds\n- \`scan\`: scans\n` });
    const error = await refusal(loadAgentMarkdown(path.join(dir, 'a.agent.md'), { shownAs: 'a.agent.md' }));
    expect(error.code).toBe('AGENT_MARKDOWN_INVALID');
    expect(error.path).toBe('a.agent.md:14');
    expect(error.message).toMatch(/"scan" names no tool of the agent \(search\)/);
  });

  it('refuses a subagent cycle with AGENT_REF_CYCLE at the line that closes it', async () => {
    const dir = await folder({
      'a.agent.md': `${head('subagents: [./b.agent.md]\n')}\nYou are A.\n`,
      'b.agent.md': `${head('subagents:\n  - ./a.agent.md\n').replace('helper', 'b')}\nYou are B.\n`,
    });
    const error = await refusal(loadAgentMarkdown(path.join(dir, 'a.agent.md')));
    expect(error.code).toBe('AGENT_REF_CYCLE');
    expect(error.path).toBe('./b.agent.md:6');
  });

  it('gives a definition problem the line of its key (a model that is not one)', async () => {
    const dir = await folder({ 'a.agent.md': `---\nname: a\ndescription: A.\nmodel: { provider: nobody }\n---\nYou help.\n` });
    const error = await refusal(loadAgentMarkdown(path.join(dir, 'a.agent.md'), { shownAs: 'a.agent.md' }));
    expect(error).toMatchObject({ code: 'AGENT_MARKDOWN_INVALID', path: 'a.agent.md:4' });
  });

  it('is registered with the rest of its directory by AgentRegistry.loadDirectory', async () => {
    const dir = await folder({ 'one.agent.md': `${head().replace('helper', 'one')}\nYou are one.\n`, 'two.agent.md': `${head().replace('helper', 'two')}\nYou are two.\n`, 'notes.md': '# not an agent\n' });
    const registry = new AgentRegistry();
    await registry.loadDirectory(dir);
    expect(registry.getAll().map((agent) => agent.name)).toEqual(['one', 'two']);
  });
});
