import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function problems(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('the purity rule: the statechart, the fold and answer validation import no I/O', () => {
  it('should refuse a Node I/O import in src/machines', async () => {
    expect(await problems("import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", 'src/machines/leak.ts')).toContain(
      '@typescript-eslint/no-restricted-imports',
    );
  });

  it('should refuse a runtime value import from actors in src/machines, but allow a type import', async () => {
    expect(await problems("import { serveTool } from '../actors/serveActors.js';\nexport const x = serveTool;\n", 'src/machines/leak.ts')).toContain(
      '@typescript-eslint/no-restricted-imports',
    );
    expect(await problems("import type { ToolRequest } from '../actors/tool.js';\nexport type X = ToolRequest;\n", 'src/machines/ok.ts')).toEqual([]);
  });

  it('should refuse the clock and randomness in the fold', async () => {
    const found = await problems('export const t = () => Date.now() + Math.random();\n', 'src/events/evolve.ts');
    expect(found).toContain('no-restricted-properties');
  });

  it('should leave actors free to do I/O', async () => {
    expect(await problems("import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", 'src/actors/tools/x.ts')).toEqual([]);
  });

  it('should find nothing to refuse in the real machine, fold and validation files', async () => {
    const results = await eslint.lintFiles(['src/machines', 'src/events/evolve.ts', 'src/validation']);
    expect(results.flatMap((r) => r.messages.map((m) => `${r.filePath}: ${m.ruleId} ${m.message}`))).toEqual([]);
  });
});
