import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(root, 'src/index.ts');

/** Every name the root entry exports, with the TSDoc of the declaration it stands for. */
function rootExports(): { readonly name: string; readonly doc: string; readonly examples: number }[] {
  const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry) as ts.SourceFile) as ts.Symbol;
  return checker.getExportsOfModule(module).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker));
    const examples = symbol.getJsDocTags(checker).filter((tag) => tag.name === 'example').length;
    return { name: exported.getName(), doc, examples };
  });
}

describe("the root entry ('redflow')", () => {
  const names = rootExports();

  it('should export what a user calls: 80 names at most', () => {
    expect(names.length).toBeGreaterThan(20);
    expect(names.length).toBeLessThanOrEqual(80);
  });

  it('should document every name it exports, each with an example', () => {
    const undocumented = names.filter(({ doc }) => doc.trim() === '').map(({ name }) => name);
    const withoutExample = names.filter(({ examples }) => examples === 0).map(({ name }) => name);
    expect({ undocumented, withoutExample }).toEqual({ undocumented: [], withoutExample: [] });
  });
});
