import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentMarkdown } from '../../src/agents/agentMarkdownFile.js';
import { agentConfigOf } from '../../src/agents/definitionParts.js';
import { RedflowError } from '../../src/errors.js';

const file = (verification: string, cycle = '') => `---
name: checker
description: Checks.
model: { provider: scripted, answers: [{ action: final, message: ok, confidence: 0.9 }] }
${verification}---

You check things.
${cycle}`;

async function load(text: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'agent-md-verify-'));
  await writeFile(path.join(dir, 'checker.agent.md'), text);
  return loadAgentMarkdown(path.join(dir, 'checker.agent.md'), { shownAs: 'checker.agent.md' });
}

describe('verification in an .agent.md file', () => {
  it('should become the definition\'s runConfig.verification, with the Done Criteria as the completeness criteria', async () => {
    const definition = await load(file('verification: { rubric: "Cite the line.", maxFailures: 3 }\nlimits: { maxTurns: 4 }\n', '\n## REACT_CYCLE\n\n### Done Criteria\n- Every finding names its line\n'));
    expect(definition.runConfig).toEqual({ maxTurns: 4, verification: { rubric: 'Cite the line.', maxFailures: 3 } });
    const agent = agentConfigOf(definition, {}, { specs: [] }, '');
    expect(agent.verification).toEqual({ rubric: 'Cite the line.', maxFailures: 3, criteria: ['Every finding names its line'] });
  });

  it('should take "self" alone, and leave an agent without it unverified', async () => {
    expect(agentConfigOf(await load(file('verification: self\n')), {}, { specs: [] }, '').verification).toBe('self');
    expect(agentConfigOf(await load(file('')), {}, { specs: [] }, '').verification).toBeUndefined();
  });

  it('should refuse a verification setting out of range with AGENT_MARKDOWN_INVALID at its line', async () => {
    const error = await load(file('verification: { maxFailures: 0 }\n')).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedflowError);
    expect(error).toMatchObject({ code: 'AGENT_MARKDOWN_INVALID', path: 'checker.agent.md:5' });
    expect((error as RedflowError).message).toMatch(/runConfig\.verification\.maxFailures.*must be an integer from 1 to 10/);
  });
});
